//! Newline-delimited JSON over a byte stream, the framing of MCP's stdio transport: the writing
//! half, a queued line writer shared by the agent and child transports (the reading half is
//! `line_reader`).

use std::{
    future::poll_fn,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll, Waker},
};

use serde::Serialize;
use tokio::{
    io::AsyncWrite,
    sync::{mpsc, oneshot},
};

use crate::{jsonrpc::line_reader::KEPT_CAPACITY, locks};

/// `message` as one line, newline included.
pub(crate) fn encode(message: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// How many lines may wait for the writer before senders wait in turn.
const QUEUE: usize = 256;

/// Queued lines are written together, up to this many bytes per write.
const BATCH: usize = 64 * 1024;

enum WriterCommand {
    Line(Line),
    Close(oneshot::Sender<()>),
}

/// A line to write, newline included, which may start past the beginning of its buffer: a
/// large answer built in place in the child's line it forwards, or the rest of a line whose
/// first bytes its sender wrote, is written from where it starts rather than moved down (a copy
/// of nearly all of a large line).
#[derive(Debug)]
pub(crate) struct Line {
    buffer: Vec<u8>,
    start: usize,
}

impl Line {
    /// The line in `buffer` from `start` on (an empty one if `start` is past its end).
    pub(crate) fn starting_at(buffer: Vec<u8>, start: usize) -> Self {
        let start = start.min(buffer.len());
        Self { buffer, start }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buffer[self.start..]
    }
}

impl From<Vec<u8>> for Line {
    fn from(buffer: Vec<u8>) -> Self {
        Self { buffer, start: 0 }
    }
}

impl From<Line> for bytes::Bytes {
    fn from(line: Line) -> Self {
        bytes::Bytes::from(line.buffer).slice(line.start..)
    }
}

/// The stream, shared by the senders and the task that writes what they queue.
struct Stream {
    /// `None` once closed: dropping it closes the stream, which a child reads as its end.
    write: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    /// Lines queued or in the task's hands: a sender writes itself only when there are none.
    queued: usize,
    /// The stream failed or is closing: nothing more is taken.
    done: bool,
}

/// The writing half of a stream: whole lines, in the order they were sent. A line is written at
/// once by its sender when nothing is queued before it and the stream takes it whole (the usual
/// case: the answer of one call); otherwise it, or its unwritten rest, is queued for one task,
/// which writes lines together. Either way a sender that is cancelled never leaves half a line
/// behind. Writing at once spares each line a channel, a wake of the task and its turn: the
/// profile of a forwarded call showed those on both of its lines. Cheap to clone; the stream
/// closes when the last clone is dropped or `close` is called.
#[derive(Clone)]
pub(crate) struct LineWriter {
    queue: mpsc::Sender<WriterCommand>,
    stream: Arc<Mutex<Stream>>,
}

impl LineWriter {
    pub(crate) fn spawn<W: AsyncWrite + Send + 'static>(write: W) -> Self {
        let (queue, commands) = mpsc::channel(QUEUE);
        let stream = Arc::new(Mutex::new(Stream {
            write: Some(Box::pin(write)),
            queued: 0,
            done: false,
        }));
        tokio::spawn(write_lines(stream.clone(), commands));
        Self { queue, stream }
    }

    /// Writes `line` (which ends with a newline), or queues it, waiting while the queue is full.
    pub(crate) async fn send(&self, line: impl Into<Line>) -> std::io::Result<()> {
        match self.write_now(line.into())? {
            Unwritten::None => Ok(()),
            Unwritten::Line(line) => {
                // Counted as queued already: uncounted again if it never gets there (the queue
                // closed, or this sender was dropped while the queue was full).
                let mut counted = Counted {
                    stream: &self.stream,
                    queued: false,
                };
                self.queue
                    .send(WriterCommand::Line(line))
                    .await
                    .map_err(|_| closed())?;
                counted.queued = true;
                Ok(())
            }
        }
    }

    /// Writes or queues `line` unless the queue is full or closed, for what may be dropped
    /// (progress).
    pub(crate) fn try_send(&self, line: Vec<u8>) -> bool {
        match self.write_now(line.into()) {
            Ok(Unwritten::None) => true,
            Ok(Unwritten::Line(line)) => {
                let queued = self.queue.try_send(WriterCommand::Line(line)).is_ok();
                if !queued {
                    locks::lock(&self.stream).queued -= 1;
                }
                queued
            }
            Err(_) => false,
        }
    }

    /// Writes what is queued, then closes the stream.
    pub(crate) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        locks::lock(&self.stream).done = true;
        if self.queue.send(WriterCommand::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }

    /// Writes as much of `line` as the stream takes without waiting, if nothing is queued; what
    /// is left must be queued, and is counted as queued already.
    fn write_now(&self, mut line: Line) -> std::io::Result<Unwritten> {
        let mut guard = locks::lock(&self.stream);
        let stream = &mut *guard;
        let Some(write) = stream.write.as_mut().filter(|_| !stream.done) else {
            return Err(closed());
        };
        if stream.queued > 0 {
            stream.queued += 1;
            return Ok(Unwritten::Line(line));
        }
        let mut context = Context::from_waker(Waker::noop());
        match write.as_mut().poll_write(&mut context, line.bytes()) {
            Poll::Ready(Ok(written)) if written == line.bytes().len() => {
                return Ok(Unwritten::None);
            }
            Poll::Ready(Ok(0)) => {
                stream.done = true;
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            Poll::Ready(Ok(written)) => {
                // The rest must go before any line sent after this one: queued now, under the
                // lock (the queue is empty, since nothing was queued).
                stream.queued += 1;
                line.start += written;
                return match self.queue.try_send(WriterCommand::Line(line)) {
                    Ok(()) => Ok(Unwritten::None),
                    Err(_) => Err(closed()),
                };
            }
            Poll::Ready(Err(error)) => {
                stream.done = true;
                return Err(error);
            }
            Poll::Pending => {}
        }
        stream.queued += 1;
        Ok(Unwritten::Line(line))
    }
}

/// A line counted in `Stream::queued` on its way to the queue.
struct Counted<'a> {
    stream: &'a Mutex<Stream>,
    queued: bool,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        if !self.queued {
            locks::lock(self.stream).queued -= 1;
        }
    }
}

/// What of a line its sender still has to queue.
enum Unwritten {
    None,
    Line(Line),
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the stream is closed")
}

async fn write_lines(stream: Arc<Mutex<Stream>>, mut commands: mpsc::Receiver<WriterCommand>) {
    let mut batch = Vec::new();
    while let Some(command) = commands.recv().await {
        let mut close = None;
        let mut lines = 0;
        // Where the batch's unwritten bytes start: where its first line starts in its buffer,
        // which the batch is.
        let mut from = 0;
        match command {
            WriterCommand::Line(line) => (batch, lines, from) = (line.buffer, 1, line.start),
            WriterCommand::Close(done) => close = Some(done),
        }
        while close.is_none() && batch.len() - from < BATCH {
            match commands.try_recv() {
                Ok(WriterCommand::Line(line)) => {
                    batch.extend_from_slice(line.bytes());
                    lines += 1;
                }
                Ok(WriterCommand::Close(done)) => close = Some(done),
                Err(_) => break,
            }
        }
        if batch.len() > from {
            if let Err(error) = write_all(&stream, &batch[from..]).await {
                tracing::debug!(%error, "the stream cannot be written; closing it");
                locks::lock(&stream).done = true;
                return;
            }
            locks::lock(&stream).queued -= lines;
            batch.clear();
            if batch.capacity() > KEPT_CAPACITY {
                batch = Vec::new();
            }
        }
        if let Some(done) = close {
            let _ = poll_fn(|context| {
                poll_stream(&stream, context, |write, context| {
                    write.poll_shutdown(context)
                })
            })
            .await;
            drop(locks::lock(&stream).write.take());
            let _ = done.send(());
            return;
        }
    }
}

/// Writes `bytes` whole and flushes, taking the stream's lock for each step only.
async fn write_all(stream: &Mutex<Stream>, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let written = poll_fn(|context| {
            poll_stream(stream, context, |write, context| {
                write.poll_write(context, bytes)
            })
        })
        .await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        bytes = &bytes[written..];
    }
    poll_fn(|context| poll_stream(stream, context, |write, context| write.poll_flush(context)))
        .await
}

/// Polls `operation` on the stream under its lock (held for the poll only).
fn poll_stream<T>(
    stream: &Mutex<Stream>,
    context: &mut Context<'_>,
    operation: impl FnOnce(
        Pin<&mut (dyn AsyncWrite + Send)>,
        &mut Context<'_>,
    ) -> Poll<std::io::Result<T>>,
) -> Poll<std::io::Result<T>> {
    match locks::lock(stream).write.as_mut() {
        Some(write) => operation(write.as_mut(), context),
        None => Poll::Ready(Err(closed())),
    }
}

#[cfg(test)]
#[path = "line_writer_tests.rs"]
mod tests;
