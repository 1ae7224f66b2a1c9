//! The submitting side: send a batch to `watch` and wait for the human, within a deadline.

use super::protocol::{Reply, Submission, socket_path};
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why no decision came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WaitError {
    /// No `watch` is listening on the root.
    NoWatch,
    /// The human did not decide within the wait.
    Timeout(Duration),
    /// The connection broke or the answer was unreadable.
    Broken(String),
}

/// Submits `sub` to the `watch` on `root` and waits up to `wait` for the decision.
/// `on_queued` is told the batch's place in the queue.
pub(crate) fn submit(
    root: &Path,
    sub: &Submission,
    wait: Duration,
    mut on_queued: impl FnMut(usize),
) -> Result<Reply, WaitError> {
    let path = socket_path(root);
    let mut stream = match UnixStream::connect(&path) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(WaitError::NoWatch);
        }
        Err(e) => return Err(WaitError::Broken(format!("{}: {e}", path.display()))),
    };
    let mut line = serde_json::to_string(sub).map_err(|e| WaitError::Broken(e.to_string()))?;
    line.push('\n');
    stream
        .write_all(line.as_bytes())
        .map_err(|e| WaitError::Broken(e.to_string()))?;
    let deadline = Instant::now() + wait;
    let mut reader = BufReader::new(stream);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(WaitError::Timeout(wait));
        }
        reader
            .get_ref()
            .set_read_timeout(Some(left))
            .map_err(|e| WaitError::Broken(e.to_string()))?;
        let mut text = String::new();
        match reader.read_line(&mut text) {
            Ok(0) => return Err(WaitError::Broken("watch closed the connection".into())),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(WaitError::Timeout(wait));
            }
            Err(e) => return Err(WaitError::Broken(e.to_string())),
        }
        let reply: Reply = serde_json::from_str(text.trim_end())
            .map_err(|e| WaitError::Broken(format!("unreadable answer from watch: {e}")))?;
        match reply {
            Reply::Queued { position } => on_queued(position),
            other => return Ok(other),
        }
    }
}
