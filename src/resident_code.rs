//! Start-up code given back. Most of an idle toolshelf's memory is its own binary: reading and
//! checking the config (the command line, the config's JSON Schema compiled and checked, the
//! meta-tools' schemas) runs code spread over the whole binary, and the kernel maps whole
//! blocks around each page it faults in. Once the first session is initialized, that code is
//! not needed again, so toolshelf tells the kernel to unmap its code (most of an idle toolshelf's
//! resident memory: docs/performance.md). The pages stay in the page cache, shared and reclaimable; the code that
//! serves calls is faulted back in on first use, each page once. It is done after the answer to
//! `initialize`, not before: finding and unmapping the pages, then faulting back in what
//! answering needs, would add to every client's wait for toolshelf to start.

use std::sync::Once;

/// The first session is initialized: start-up is over (once per process).
pub(crate) fn start_up_ended() {
    static ENDED: Once = Once::new();
    ENDED.call_once(release_start_up_code);
}

/// Unmaps toolshelf's own code (never written: every page of it is the file's content).
/// Best effort, Linux only.
#[cfg(target_os = "linux")]
fn release_start_up_code() {
    let (Ok(exe), Ok(maps)) = (
        std::env::current_exe(),
        std::fs::read_to_string("/proc/self/maps"),
    ) else {
        return;
    };
    let Some(exe) = exe.to_str() else {
        return;
    };
    let mut released = 0usize;
    for (start, end) in code_mappings_of(&maps, exe) {
        if madvise_dontneed(start, end - start) {
            released += end - start;
        }
    }
    tracing::debug!(released, "start-up code unmapped");
}

#[cfg(not(target_os = "linux"))]
fn release_start_up_code() {}

/// The address ranges of `exe`'s executable, read-only mappings in `maps` (its code).
#[cfg(any(target_os = "linux", test))]
fn code_mappings_of(maps: &str, exe: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (start, end) = fields.next()?.split_once('-')?;
            let perms = fields.next()?;
            let path = fields.nth(3)?;
            (perms == "r-xp" && path == exe).then_some((
                usize::from_str_radix(start, 16).ok()?,
                usize::from_str_radix(end, 16).ok()?,
            ))
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn madvise_dontneed(start: usize, length: usize) -> bool {
    // SAFETY: the range is a whole private mapping of toolshelf's own code, mapped read and
    // execute only and never written (Rust emits no text relocations), so every page of it is
    // the file's content: dropping it loses nothing, and a later access faults the same bytes
    // back in. No Rust reference is invalidated: the memory stays mapped and unchanged.
    unsafe { libc::madvise(start as *mut libc::c_void, length, libc::MADV_DONTNEED) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_code_of_the_binary_is_taken() {
        let maps = "\
1000-2000 r--p 00000000 fe:00 7 /bin/toolshelf
2000-5000 r-xp 00001000 fe:00 7 /bin/toolshelf
5000-6000 r--p 00004000 fe:00 7 /bin/toolshelf
6000-7000 rw-p 00005000 fe:00 7 /bin/toolshelf
8000-9000 r-xp 00000000 fe:00 9 /lib/libc.so.6
a000-b000 rw-p 00000000 00:00 0
";
        assert_eq!(code_mappings_of(maps, "/bin/toolshelf"), [(0x2000, 0x5000)]);
    }
}
