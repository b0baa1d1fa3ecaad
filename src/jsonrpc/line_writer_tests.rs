use super::*;

/// A child reads its stdin's end when toolshelf closes it, though clones of the writer live
/// on (a pipe's shutdown does nothing: only closing it ends it).
#[tokio::test]
async fn a_closed_stream_ends_for_its_reader_while_clones_live() {
    use tokio::io::AsyncReadExt;
    let mut cat = tokio::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cat starts");
    let (Some(stdin), Some(mut stdout)) = (cat.stdin.take(), cat.stdout.take()) else {
        panic!("cat's pipes");
    };
    let writer = LineWriter::spawn(stdin);
    let clone = writer.clone();
    writer.send(b"a\n".to_vec()).await.expect("written");
    writer.close().await;
    let mut read = Vec::new();
    let ended = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stdout.read_to_end(&mut read),
    );
    assert!(ended.await.is_ok_and(|read| read.is_ok()), "cat saw no end");
    assert_eq!(read, b"a\n");
    assert!(clone.send(b"b\n".to_vec()).await.is_err());
}

/// A line the stream takes only in part is finished before any line sent after it.
#[tokio::test]
async fn the_rest_of_a_line_goes_before_later_lines() {
    use tokio::io::AsyncReadExt;
    let (ours, mut theirs) = tokio::io::duplex(64);
    let writer = LineWriter::spawn(ours);
    let mut long = vec![b'x'; 1000];
    long.push(b'\n');
    writer.send(long.clone()).await.expect("written or queued");
    writer.send(b"b\n".to_vec()).await.expect("queued");
    let reader = tokio::spawn(async move {
        let mut read = Vec::new();
        theirs.read_to_end(&mut read).await.map(|_| read)
    });
    writer.close().await;
    let read = reader.await.expect("joined").expect("read");
    long.extend_from_slice(b"b\n");
    assert_eq!(read, long);
}
