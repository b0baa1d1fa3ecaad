"""Checks that a built toolshelf binary is what packaging/platforms.json says its target ships:
its format and architecture; on Linux, no glibc symbol version newer than 2.17; on macOS, the
oldest macOS it claims to run on (LC_BUILD_VERSION) and, on arm64, a code signature whose page
hashes match the file (Apple silicon runs no unsigned code; zig's linker signs ad hoc); with --stripped, no symbol table or debug info left.

Usage: check_binary.py TARGET BINARY [--stripped]. Prints one line saying what was checked;
exits 1 naming what is wrong. Reads the binary with LIEF (packaging/requirements.txt).
"""

import hashlib
import json
import os
import struct
import sys

import lief

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
target, binary_path, *flags = sys.argv[1:]
stripped = "--stripped" in flags
with open(os.path.join(root, "packaging", "platforms.json")) as file:
    platforms = {p["target"]: p for p in json.load(file)["platforms"]}
if target not in platforms:
    sys.exit(f"{target}: not a target of packaging/platforms.json ({', '.join(platforms)})")
claims = platforms[target]
lief.logging.disable()
binary = lief.parse(binary_path)
wrong = []


def version(text):
    return tuple(int(part) for part in text.split("."))


def check_machine(built, by_name):
    """Notes a binary built for another architecture than its target's (by_name: the format's
    constant of each of packaging/platforms.json's names)."""
    if built != by_name[claims["machine"]]:
        wrong.append(f"built for {built}, not {claims['machine']}")


def signature_problem(binary):
    """What is wrong with a Mach-O file's code signature, or None: each page's SHA-256 in its
    CodeDirectory must be the page's (a binary changed after signing, by a strip say, is
    killed at launch on Apple silicon)."""
    if not binary.has_code_signature:
        return "has no code signature"
    blob = bytes(binary.code_signature.content)
    magic, _, count = struct.unpack_from(">III", blob, 0)
    if magic != 0xFADE0CC0:
        return "a code signature that is not a signature blob"
    for index in range(count):
        kind, offset = struct.unpack_from(">II", blob, 12 + 8 * index)
        if kind != 0:
            continue
        fields = struct.unpack_from(">IIIIIIIIIBBBB", blob, offset)
        hash_offset, code_slots, code_limit = fields[4], fields[7], fields[8]
        hash_size, hash_type, page_shift = fields[9], fields[10], fields[12]
        if hash_type != 2 or hash_size != 32:
            return f"a code signature hashed by type {hash_type}, not SHA-256"
        with open(binary_path, "rb") as file:
            content = file.read(code_limit)
        page = 1 << page_shift
        for slot in range(code_slots):
            at = offset + hash_offset + slot * hash_size
            listed = blob[at:at + hash_size]
            if hashlib.sha256(content[slot * page:(slot + 1) * page]).digest() != listed:
                return f"a code signature that does not match page {slot}: changed after signing"
        return None
    return "a code signature without a code directory"


if claims["format"] == "ELF":
    if not isinstance(binary, lief.ELF.Binary):
        sys.exit(f"{binary_path}: not an ELF file, which {target} runs")
    check_machine(binary.header.machine_type,
                  {"x86-64": lief.ELF.ARCH.X86_64, "aarch64": lief.ELF.ARCH.AARCH64})
    oldest = version(claims["oldest"].removeprefix("glibc "))
    newer = sorted(
        aux.name
        for requirement in binary.symbols_version_requirement
        for aux in requirement.get_auxiliary_symbols()
        if aux.name.startswith("GLIBC_") and version(aux.name.removeprefix("GLIBC_")) > oldest
    )
    if newer:
        wrong.append(f"needs {', '.join(newer)}, newer than {claims['oldest']}")
    debug = [s.name for s in binary.sections if s.name == ".symtab" or s.name.startswith(".debug")]
elif claims["format"] == "Mach-O":
    if isinstance(binary, lief.MachO.FatBinary):
        binary = binary.at(0) if binary.size == 1 else None
    if not isinstance(binary, lief.MachO.Binary):
        sys.exit(f"{binary_path}: not a single-architecture Mach-O file, which {target} runs")
    cpu = lief.MachO.Header.CPU_TYPE
    check_machine(binary.header.cpu_type, {"x86-64": cpu.X86_64, "arm64": cpu.ARM64})
    oldest = list(version(claims["oldest"].removeprefix("macOS "))) + [0]
    claimed = list(binary.build_version.minos) if binary.has_build_version else None
    if claimed != oldest[:3]:
        wrong.append(f"claims macOS {claimed} as its oldest, not {claims['oldest']}")
    # Apple silicon runs signed code only; an Intel Mac runs unsigned code too.
    if claims["machine"] == "arm64" or binary.has_code_signature:
        problem = signature_problem(binary)
        if problem:
            wrong.append(problem)
    debug = [s.name for s in binary.sections if s.segment_name == "__DWARF"]
    if stripped:
        # Left by a strip: what the dynamic linker needs (external and private external
        # symbols). Not: local symbols (N_SECT alone) or debugging entries (N_STAB).
        local = [s.name for s in binary.symbols if s.origin == lief.MachO.Symbol.ORIGIN.SYMTAB
                 and (s.raw_type & 0x1F == 0x0E or s.raw_type & 0xE0)]
        debug += local[:3]
else:
    if not isinstance(binary, lief.PE.Binary):
        sys.exit(f"{binary_path}: not a PE file, which {target} runs")
    types = lief.PE.Header.MACHINE_TYPES
    check_machine(binary.header.machine, {"x86-64": types.AMD64, "arm64": types.ARM64})
    if binary.optional_header.magic != lief.PE.PE_TYPE.PE32_PLUS:
        wrong.append("not PE32+")
    if binary.optional_header.subsystem != lief.PE.OptionalHeader.SUBSYSTEM.WINDOWS_CUI:
        wrong.append(f"subsystem {binary.optional_header.subsystem}, not a console program")
    debug = [s.name for s in binary.sections if s.name.startswith((".debug", "/"))]
    if binary.header.numberof_symbols:
        debug.append(f"{binary.header.numberof_symbols} COFF symbols")
if stripped and debug:
    wrong.append(f"not stripped: {', '.join(debug[:3])}")
if wrong:
    sys.exit(f"{binary_path} is not what {target} ships: {'; '.join(wrong)}")
print(f"{binary_path}: {claims['format']} {claims['machine']}, {claims['oldest']}"
      f"{', stripped' if stripped else ''}: as {target} ships")
