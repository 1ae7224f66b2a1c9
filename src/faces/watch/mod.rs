//! `redline watch` (SPEC §1, §9): the reviewer as a long-running inbox on a root.
//!
//! Hooks in `--review` mode and `redline mcp --review` submit batches over a Unix socket under
//! the root's state directory ([`protocol::socket_path`]). Batches queue up in arrival order (two
//! agents on one root wait their turn); each is shown in the reviewer (SPEC §8 keys, `n` for a note
//! on an edit, `N` for the batch) with the waiting agent's name in the header. `A` then `Enter`
//! sends the decisions and notes back instead of writing: the agent's harness writes what was
//! accepted. A batch whose files changed since the agent read them is answered `stale`, both
//! when it comes up and when the human decides. `q` on a batch closes it (rejected, with a note
//! that the reviewer closed it); `q` on the empty inbox stops `watch`, telling queued agents.
//! A batch whose agent stopped waiting (its hook timed out) is dropped.

pub(crate) mod client;
pub(crate) mod mcp;
pub(crate) mod protocol;

use crate::error::ExitStatus;
use crate::faces::review::{self, Model, apply, update, view};
use crate::request::dialect::{self, InputKind};
use crate::service::{self, Settings};
use protocol::{Reply, Submission, Verdict, changed, socket_path};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::widgets::Paragraph;
use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the inbox looks for new batches and gone agents while idle or reviewing.
const TICK: Duration = Duration::from_millis(200);
/// The largest submission accepted (a batch is text; this bounds a confused client).
const MAX_SUBMISSION: u64 = 64 << 20;

/// A batch waiting, with the connection its agent waits on.
struct Pending {
    sub: Submission,
    stream: UnixStream,
}

type Queue = Arc<Mutex<VecDeque<Pending>>>;

fn send(stream: &mut UnixStream, reply: &Reply) -> bool {
    let Ok(mut line) = serde_json::to_string(reply) else {
        return false;
    };
    line.push('\n');
    stream.write_all(line.as_bytes()).is_ok()
}

/// Whether the agent still waits on `stream` (it sends nothing after its batch, so readable
/// means closed).
fn agent_gone(stream: &UnixStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut b = [0u8; 1];
    let gone = match (&*stream).read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    };
    let _ = stream.set_nonblocking(false);
    gone
}

/// Tests' stand-in for `watch`: accepts one client on `listener` and reads the line it sent
/// (its submission); the stream is left open for the reply.
#[cfg(test)]
pub(crate) fn accept_one(listener: &UnixListener) -> (UnixStream, String) {
    let (stream, _) = listener.accept().unwrap();
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).unwrap();
    (stream, line)
}

/// Binds the inbox socket, replacing a leftover one that nobody listens on.
pub(crate) fn bind(root: &Path) -> Result<UnixListener, String> {
    let path = socket_path(root);
    if path.as_os_str().len() >= 100 {
        return Err(format!(
            "the socket path {} is too long for a Unix socket",
            path.display()
        ));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if UnixStream::connect(&path).is_ok() {
        return Err(format!(
            "another redline watch is already running on {}",
            root.display()
        ));
    }
    let _ = std::fs::remove_file(&path);
    UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))
}

/// Accepts submissions forever, queueing each and telling its agent its place.
fn accept_loop(listener: UnixListener, queue: Queue) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let queue = queue.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            let mut reader = BufReader::new((&stream).take(MAX_SUBMISSION));
            if reader.read_line(&mut line).is_err() {
                return;
            }
            let mut stream = stream;
            match serde_json::from_str::<Submission>(line.trim_end()) {
                Ok(sub) => {
                    let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                    let position = q.len() + 1;
                    if let Ok(s) = stream.try_clone() {
                        q.push_back(Pending { sub, stream: s });
                        drop(q);
                        send(&mut stream, &Reply::Queued { position });
                    }
                }
                Err(e) => {
                    send(
                        &mut stream,
                        &Reply::Closed {
                            message: format!("watch could not read the batch: {e}"),
                        },
                    );
                }
            }
        });
    }
}

/// How `watch` runs.
#[derive(Debug, Clone)]
pub(crate) struct WatchOptions {
    pub settings: Settings,
    pub accept_exact: bool,
    pub monochrome: bool,
}

/// Runs the inbox until the human quits it on the empty screen.
pub(crate) fn run(opts: &WatchOptions) -> Result<ExitStatus, String> {
    let root_dir = std::path::absolute(&opts.settings.root).map_err(|e| {
        format!(
            "cannot use {} as the root: {e}",
            opts.settings.root.display()
        )
    })?;
    let root = service::open_root(&opts.settings).map_err(|e| e.message)?;
    let listener = bind(&root_dir)?;
    let sock = socket_path(&root_dir);
    let queue: Queue = Arc::new(Mutex::new(VecDeque::new()));
    {
        let queue = queue.clone();
        std::thread::spawn(move || accept_loop(listener, queue));
    }
    let result = (|| -> std::io::Result<()> {
        let (mut term, _guard) = review::terminal::enter()?;
        let mut status = String::new();
        loop {
            let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
            let Some(mut p) = next else {
                let text = format!(
                    " redline watch — {}\n\n Waiting for agents' edits (hooks with --review, `redline mcp --review`).\n\n {status}\n\n q quits",
                    root_dir.display()
                );
                term.draw(|f| f.render_widget(Paragraph::new(text), f.area()))?;
                if event::poll(TICK)?
                    && let Event::Key(k) = event::read()?
                    && k.kind == KeyEventKind::Press
                    && (k.code == KeyCode::Char('q')
                        || (k.code == KeyCode::Char('c')
                            && k.modifiers.contains(KeyModifiers::CONTROL)))
                {
                    return Ok(());
                }
                continue;
            };
            if agent_gone(&p.stream) {
                status = format!("{}'s batch was dropped: it stopped waiting", p.sub.agent);
                continue;
            }
            status = review_one(&mut term, &mut p, &root, opts, &queue)?;
        }
    })();
    // Everyone still waiting hears that the inbox closed.
    let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
    while let Some(mut p) = q.pop_front() {
        send(
            &mut p.stream,
            &Reply::Closed {
                message: "redline watch stopped before this batch was reviewed".into(),
            },
        );
    }
    let _ = std::fs::remove_file(&sock);
    result.map_err(|e| format!("terminal: {e}"))?;
    Ok(ExitStatus::Success)
}

fn stale_reply(files: &[String]) -> Reply {
    Reply::Stale {
        message: format!(
            "{} changed on disk while the edit waited for review; nothing was decided",
            files.join(", ")
        ),
    }
}

/// Shows one batch until the human sends decisions or closes it; returns a status line.
fn review_one(
    term: &mut review::terminal::Tui,
    p: &mut Pending,
    root: &crate::write::Root,
    opts: &WatchOptions,
    queue: &Queue,
) -> std::io::Result<String> {
    let who = p.sub.agent.clone();
    let stale = changed(&p.sub.versions);
    if !stale.is_empty() {
        send(&mut p.stream, &stale_reply(&stale));
        return Ok(format!("{who}'s batch was stale: {}", stale.join(", ")));
    }
    let req = match dialect::parse(
        &p.sub.request,
        InputKind::Auto,
        crate::request::wire::parse_json,
    ) {
        Ok(r) => r,
        Err(e) => {
            send(
                &mut p.stream,
                &Reply::Closed {
                    message: format!("watch could not read the batch: {e}"),
                },
            );
            return Ok(format!("{who}'s batch was unreadable"));
        }
    };
    let plan = match service::resolve(&req, root, &opts.settings, crate::report::Mode::DryRun) {
        Ok(plan) => plan,
        Err(e) => {
            send(
                &mut p.stream,
                &Reply::Closed {
                    message: format!("watch could not resolve the batch: {e}"),
                },
            );
            return Ok(format!("{who}'s batch did not resolve"));
        }
    };
    let mut m = Model::new(
        plan,
        review::Options {
            accept_exact: opts.accept_exact,
            monochrome: opts.monochrome,
        },
    );
    // Syntax colours like the reviewer, unless monochrome or REDLINE_THEME=off.
    m.set_syntax(review::highlight::Palette::from_env());
    let title = |m: &mut Model, waiting: usize| {
        let session = p
            .sub
            .session
            .as_deref()
            .map(|s| format!(" session {}", s.chars().take(8).collect::<String>()))
            .unwrap_or_default();
        m.title = format!(
            "watch · {who}{session} waits ({}){}",
            p.sub.tool,
            if waiting > 0 {
                format!(" · {waiting} more queued")
            } else {
                String::new()
            }
        );
    };
    let size = term.size()?;
    update::update(&mut m, review::Action::Resize(size.width, size.height));
    loop {
        let waiting = queue.lock().unwrap_or_else(|q| q.into_inner()).len();
        title(&mut m, waiting);
        term.draw(|f| view::draw(&m, f))?;
        if m.exit.is_some() {
            let decisions = verdicts(&m)
                .into_iter()
                .map(|mut v| {
                    if v.accepted() || v.decision == "undecided" {
                        v.decision = "rejected".into();
                    }
                    v
                })
                .collect();
            send(
                &mut p.stream,
                &Reply::Decided {
                    decisions,
                    note: Some(m.batch_note.clone().unwrap_or_else(|| {
                        "the reviewer closed this batch without applying it".into()
                    })),
                },
            );
            return Ok(format!("closed {who}'s batch without applying it"));
        }
        if !event::poll(TICK)? {
            if agent_gone(&p.stream) {
                return Ok(format!("{who} stopped waiting; its batch was dropped"));
            }
            continue;
        }
        loop {
            let ev = event::read()?;
            if let Some(a) = review::app::action(&m, &ev)
                && let Some(update::Effect::Apply) = update::update(&mut m, a)
            {
                let stale = changed(&p.sub.versions);
                if !stale.is_empty() {
                    send(&mut p.stream, &stale_reply(&stale));
                    return Ok(format!("{who}'s batch went stale: {}", stale.join(", ")));
                }
                let decisions = verdicts(&m);
                let accepted = decisions.iter().filter(|v| v.accepted()).count();
                send(
                    &mut p.stream,
                    &Reply::Decided {
                        decisions,
                        note: m.batch_note.clone(),
                    },
                );
                return Ok(format!("sent {who} the decisions ({accepted} accepted)"));
            }
            if m.exit.is_some() || !event::poll(Duration::ZERO)? {
                break;
            }
        }
    }
}

/// The reviewer's decisions as the protocol sends them (undecided counts as not accepted).
fn verdicts(m: &Model) -> Vec<Verdict> {
    apply::decisions(m)
        .into_iter()
        .map(|d| Verdict {
            path: d.path,
            index: d.index,
            decision: d.decision.to_string(),
            note: d.note,
        })
        .collect()
}
