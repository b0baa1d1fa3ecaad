/* ProcessPrng for Wine 8, which lacks it: Rust's standard library (1.78 and later) asks
 * bcryptprimitives.dll for its random bytes, and a Windows build of toolshelf does not start
 * under Wine 8 without it. Test harness only, placed beside the .exe the tests run under Wine
 * (scripts/fetch-wine.sh builds it); never shipped: Windows has the real one. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom, advapi32 */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
