//! Start-up code given back. Most of an idle toolshelf's memory is its own binary: reading and
//! checking the config (the command line, the config's JSON Schema compiled and checked, the
//! meta-tools' schemas) runs code spread over the whole binary, and the kernel maps whole
//! blocks around each page it faults in. Once the first session begins, that code is not needed
//! again, so toolshelf tells the kernel to unmap the binary's read-only pages (measured: 10.7
//! of an idle toolshelf's 13.6 MB were its binary). They stay in the page cache, shared and
//! reclaimable; the code that serves calls is faulted back in on first use, each page once.

use std::sync::Once;

/// The first session began: start-up is over (once per process).
pub(crate) fn start_up_ended() {
    static ENDED: Once = Once::new();
    ENDED.call_once(release_start_up_code);
}

/// Unmaps the pages of toolshelf's own binary that were never written (its code and read-only
/// data); pages a relocation wrote (an anonymous copy) are kept. Best effort, Linux only.
#[cfg(target_os = "linux")]
fn release_start_up_code() {
    let (Ok(exe), Ok(smaps)) = (
        std::env::current_exe(),
        std::fs::read_to_string("/proc/self/smaps"),
    ) else {
        return;
    };
    let Some(exe) = exe.to_str() else {
        return;
    };
    let mut released = 0usize;
    for (start, end) in read_only_mappings_of(&smaps, exe) {
        if madvise_dontneed(start, end - start) {
            released += end - start;
        }
    }
    tracing::debug!(released, "start-up code unmapped");
}

#[cfg(not(target_os = "linux"))]
fn release_start_up_code() {}

/// The address ranges of `exe`'s mappings in `smaps` that are not writable and hold no
/// anonymous page.
fn read_only_mappings_of(smaps: &str, exe: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            let perms = fields.next().unwrap_or_default();
            let path = fields.nth(3).unwrap_or_default();
            current = (path == exe && !perms.contains('w')).then_some((start, end));
        } else if first == "Anonymous:"
            && let Some(range) = current.take()
            && fields.next() == Some("0")
        {
            found.push(range);
        }
    }
    found
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn madvise_dontneed(start: usize, length: usize) -> bool {
    // SAFETY: the range is a whole mapping of the executable file that is not writable and holds
    // no anonymous page (checked in smaps just now), so every page of it is the file's own
    // content: dropping it loses nothing, and a later access faults the same bytes back in. No
    // Rust reference is invalidated, since the memory stays mapped and unchanged.
    unsafe { libc::madvise(start as *mut libc::c_void, length, libc::MADV_DONTNEED) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unwritten_read_only_mappings_of_the_binary_are_taken() {
        let smaps = "\
1000-2000 r--p 00000000 fe:00 7 /bin/toolshelf
Rss: 4 kB
Anonymous: 0 kB
2000-5000 r-xp 00001000 fe:00 7 /bin/toolshelf
Anonymous: 0 kB
5000-6000 r--p 00004000 fe:00 7 /bin/toolshelf
Anonymous: 4 kB
6000-7000 rw-p 00005000 fe:00 7 /bin/toolshelf
Anonymous: 0 kB
8000-9000 r-xp 00000000 fe:00 9 /lib/libc.so.6
Anonymous: 0 kB
";
        assert_eq!(
            read_only_mappings_of(smaps, "/bin/toolshelf"),
            [(0x1000, 0x2000), (0x2000, 0x5000)]
        );
    }
}
