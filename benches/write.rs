//! Whole-process write benchmark against floor programs (issue 12): `cargo bench --bench write`.
//!
//! Every figure is a whole process (`redline apply` or `redline serve`, release build) timed
//! side by side with a *floor*: the least a correct program must do for the same result, run
//! as a helper mode of this very bench binary and written with std and the hashing crate only.
//! Runs are interleaved (floor, redline, redline, floor, ...) so drift in the machine's load
//! hits both alike; the figure is the ratio of the medians.
//!
//! - `small`: one-line edit of a 200-line file. Floor: read, find, splice, temp file in the same
//!   directory, write, fsync, rename, fsync the directory.
//! - `big`: 12 MB and 100 MB files, 1 and 1,000 exact edits. Floor: read, SHA-256 (the version
//!   redline reports), find and splice each edit, temp file, write, fsync, rename, fsync dir.
//!   Peak RSS of each process (wait4) against the file size, and the median CPU time (user +
//!   system, wait4) of each side: on a loaded machine wall times swing with the disk and the
//!   other processes, CPU time much less.
//! - `serve`: `redline serve` apply requests per second, one small-file edit each, against the
//!   floor's edit done in a loop in the bench process (a server's ceiling on this disk).
//!
//! Options: `small|big|serve` (default all), `--redline PATH` (default the release binary next
//! to this bench), `--dir DIR` (default `target/write-bench`: keep it on a real disk; the bench
//! prints the filesystem), `--runs N`. Nothing here asserts: it reports. Peak RSS is each
//! child's `ru_maxrss`, which starts from its parent's: so the bench process never holds a big
//! text or buffer itself (fixtures are written and SHA-256 is timed by child modes of this
//! binary).

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Floor programs (std + sha2 only).

/// `--floor FILE HASH EDITS...`: EDITS are `old\u{1}new` pairs applied in file order.
fn floor(args: &[String]) {
    let path = Path::new(&args[0]);
    let hash = args[1] == "hash";
    let edits: Vec<(&str, &str)> = args[2..]
        .iter()
        .map(|pair| pair.split_once('\u{1}').expect("floor: edit"))
        .collect();
    floor_edit(path, hash, &edits);
}

/// The floor's work on `path`: read, hash (`hash`), splice `edits` in file order, write a temp,
/// fsync, rename, fsync the directory.
fn floor_edit(path: &Path, hash: bool, edits: &[(&str, &str)]) {
    let data = std::fs::read(path).expect("floor: read");
    if hash {
        let d = Sha256::digest(&data);
        std::hint::black_box(d);
    }
    let text = std::str::from_utf8(&data).expect("floor: UTF-8");
    let mut out = Vec::with_capacity(data.len() + 4096);
    let mut at = 0;
    for &(old, new) in edits {
        let i = text[at..].find(old).expect("floor: old text not found") + at;
        out.extend_from_slice(&data[at..i]);
        out.extend_from_slice(new.as_bytes());
        at = i + old.len();
    }
    out.extend_from_slice(&data[at..]);
    let dir = path.parent().expect("floor: dir");
    let tmp = dir.join(format!(".floor-{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&tmp)
        .expect("floor: create temp");
    f.write_all(&out).expect("floor: write");
    f.sync_all().expect("floor: fsync");
    drop(f);
    std::fs::rename(&tmp, path).expect("floor: rename");
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("floor: fsync dir");
}

// ---------------------------------------------------------------------------------------------
// Process timing with peak RSS.

struct Sample {
    wall: Duration,
    /// User plus system time (both threads, when there are two).
    cpu: Duration,
    maxrss_kb: i64,
}

fn run(cmd: &mut Command, stdin: Option<&[u8]>) -> Sample {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let t = Instant::now();
    // Reaped below by wait4, which also gives its rusage (clippy cannot see that).
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn");
    if let Some(input) = stdin {
        let mut si = child.stdin.take().expect("stdin");
        si.write_all(input).expect("feed stdin");
    }
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t.elapsed();
    assert_eq!(r, pid, "wait4");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        panic!("{cmd:?} failed ({status}): {err}");
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Sample {
        wall,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        maxrss_kb: ru.ru_maxrss,
    }
}

/// User plus system time of this process so far (the floor's loop in `serve` runs here).
fn own_cpu() -> Duration {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("json")
}

/// One apply request: `edits` as (old, new) pairs on `path`.
fn request(path: &str, edits: &[(String, String)]) -> String {
    let e: Vec<String> = edits
        .iter()
        .map(|(o, n)| {
            format!(
                "{{\"oldText\":{},\"newText\":{}}}",
                json_str(o),
                json_str(n)
            )
        })
        .collect();
    format!(
        "{{\"files\":[{{\"path\":{},\"edits\":[{}]}}]}}",
        json_str(path),
        e.join(",")
    )
}

struct Ctx {
    me: PathBuf,
    redline: PathBuf,
    dir: PathBuf,
    runs: usize,
}

impl Ctx {
    fn floor(&self, file: &Path, hash: bool, edits: &[(String, String)]) -> Sample {
        let mut c = Command::new(&self.me);
        c.arg("--floor")
            .arg(file)
            .arg(if hash { "hash" } else { "nohash" });
        for (o, n) in edits {
            c.arg(format!("{o}\u{1}{n}"));
        }
        run(&mut c, None)
    }

    fn redline(&self, root: &Path, req: &str) -> Sample {
        let mut c = Command::new(&self.redline);
        c.arg("--root").arg(root).arg("apply").arg("-");
        run(&mut c, Some(req.as_bytes()))
    }
}

/// A source-like text of about `size` bytes; returns it and its number of items.
fn text(size: usize) -> (String, usize) {
    let mut s = String::with_capacity(size + 200);
    let mut i = 0;
    while s.len() < size {
        s.push_str(&format!(
            "fn item_{i}(x: u64) -> u64 {{\n    let label = \"value {i}\"; // note {i}\n    x * {i} + 1\n}}\n\n"
        ));
        i += 1;
    }
    (s, i)
}

/// Edits of items spread evenly over the file; `flip` swaps old and new (to undo them).
fn edits(items: usize, n: usize, flip: bool) -> Vec<(String, String)> {
    let step = (items / n).max(1);
    (0..n)
        .map(|k| {
            let i = k * step;
            let a = format!("    x * {i} + 1\n");
            let b = format!("    x * {i} + 2\n");
            if flip { (b, a) } else { (a, b) }
        })
        .collect()
}

/// The medians of a case's runs (wall and CPU time) and its peak RSS.
struct Medians {
    wall: Duration,
    cpu: Duration,
    maxrss_kb: i64,
}

/// Interleaved runs of the floor and redline on twin files; returns the floor's medians and
/// redline's.
fn side_by_side(
    ctx: &Ctx,
    name: &str,
    fixture: &Path,
    items: usize,
    n: usize,
    hash: bool,
    runs: usize,
) -> (Medians, Medians) {
    let fdir = ctx.dir.join(format!("floor-{name}"));
    let rdir = ctx.dir.join(format!("redline-{name}"));
    for d in [&fdir, &rdir] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("mkdir");
        std::fs::copy(fixture, d.join("f.rs")).expect("copy fixture");
        // On disk before the first run: a copy's writeback would slow whichever side runs while
        // the kernel flushes it.
        std::fs::File::open(d.join("f.rs"))
            .and_then(|f| f.sync_all())
            .expect("sync fixture");
    }
    let fwd = edits(items, n, false);
    let back = edits(items, n, true);
    let (req_fwd, req_back) = (request("f.rs", &fwd), request("f.rs", &back));
    // One unmeasured round trip of each side first (each file ends as it began): the first run
    // after the fixture was written pays for memory the kernel had given back, whichever side
    // it is.
    for (e, req) in [(&fwd, &req_fwd), (&back, &req_back)] {
        ctx.floor(&fdir.join("f.rs"), hash, e);
        ctx.redline(&rdir, req);
    }
    let (mut ft, mut rt, mut fr, mut rr) = (Vec::new(), Vec::new(), 0, 0);
    let (mut fc, mut rc) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let (e, req) = if i % 2 == 0 {
            (&fwd, &req_fwd)
        } else {
            (&back, &req_back)
        };
        let f = || ctx.floor(&fdir.join("f.rs"), hash, e);
        let r = || ctx.redline(&rdir, req);
        let (a, b) = if i % 2 == 0 {
            let a = f();
            (a, r())
        } else {
            let b = r();
            (f(), b)
        };
        ft.push(a.wall);
        rt.push(b.wall);
        fc.push(a.cpu);
        rc.push(b.cpu);
        fr = fr.max(a.maxrss_kb);
        rr = rr.max(b.maxrss_kb);
    }
    let same = same_files(&fdir.join("f.rs"), &rdir.join("f.rs"));
    assert!(same, "floor and redline disagree on the result of {name}");
    let _ = std::fs::remove_dir_all(&fdir);
    let _ = std::fs::remove_dir_all(&rdir);
    let m = |wall, cpu, maxrss_kb| Medians {
        wall: median(wall),
        cpu: median(cpu),
        maxrss_kb,
    };
    (m(ft, fc, fr), m(rt, rc, rr))
}

/// Whether two files hold the same bytes, compared in chunks (the bench process stays small:
/// see [`fixture`]).
fn same_files(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ra, mut rb) = (BufReader::new(fa), BufReader::new(fb));
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = ra.read(&mut ba).expect("read");
        if n == 0 {
            return rb.read(&mut bb[..1]).expect("read") == 0;
        }
        if rb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// Writes a [`text`] of `size` bytes to `path` in a child process and returns its number of
/// items. A child's peak RSS (`ru_maxrss`) starts from its parent's, so the bench process never
/// holds a big text or buffer itself: the peaks it reports are the children's own.
fn fixture(ctx: &Ctx, path: &Path, size: usize) -> usize {
    let out = Command::new(&ctx.me)
        .arg("--make")
        .arg(path)
        .arg(size.to_string())
        .output()
        .expect("spawn fixture writer");
    assert!(out.status.success(), "fixture writer failed");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("fixture items")
}

fn small(ctx: &Ctx) {
    let (content, items) = text(8 * 1024);
    let path = ctx.dir.join("small.rs");
    std::fs::write(&path, &content).expect("write fixture");
    println!(
        "\nsmall: one-line edit of a {} byte file, whole process, {} interleaved runs",
        content.len(),
        ctx.runs
    );
    let (f, r) = side_by_side(ctx, "small", &path, items, 1, false, ctx.runs);
    let _ = std::fs::remove_file(&path);
    println!(
        "  floor {:>8.2} ms   redline apply {:>8.2} ms   ratio {:.2}x   (cpu {:.2} / {:.2} ms)",
        ms(f.wall),
        ms(r.wall),
        r.wall.as_secs_f64() / f.wall.as_secs_f64(),
        ms(f.cpu),
        ms(r.cpu)
    );
}

fn big(ctx: &Ctx) {
    println!("\nbig: read + sha256 + splice + write + fsync floor vs redline apply, whole process");
    println!(
        "  {:>6} {:>6} {:>10} {:>10} {:>7} {:>10} {:>10} {:>10} {:>10}",
        "file",
        "edits",
        "floor",
        "redline",
        "ratio",
        "floor rss",
        "rl rss/file",
        "floor cpu",
        "rl cpu"
    );
    for &mb in &[12usize, 100] {
        let size = mb * 1_000_000;
        let path = ctx.dir.join(format!("big{mb}.rs"));
        let items = fixture(ctx, &path, size);
        for &n in &[1usize, 1000, 10_000] {
            let runs = if mb >= 100 {
                ctx.runs.min(6)
            } else {
                ctx.runs.min(10)
            };
            let (f, r) = side_by_side(ctx, &format!("big{mb}"), &path, items, n, true, runs);
            println!(
                "  {:>5}M {:>6} {:>8.1}ms {:>8.1}ms {:>6.2}x {:>8.1}MB {:>10.2}x {:>8.1}ms {:>8.1}ms",
                mb,
                n,
                ms(f.wall),
                ms(r.wall),
                r.wall.as_secs_f64() / f.wall.as_secs_f64(),
                f.maxrss_kb as f64 / 1024.0,
                (r.maxrss_kb as f64 * 1024.0) / size as f64,
                ms(f.cpu),
                ms(r.cpu)
            );
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// `redline serve` against the floor's work done in a loop in this process (the most a server
/// could reach on this disk), one serve request and one floor edit in turn.
fn serve(ctx: &Ctx) {
    let root = ctx.dir.join("serve");
    let fdir = ctx.dir.join("serve-floor");
    let (content, items) = text(8 * 1024);
    for d in [&root, &fdir] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("mkdir");
        std::fs::write(d.join("f.rs"), &content).expect("write");
    }
    let n = 400;
    // Reaped below by wait4, which also gives its rusage (clippy cannot see that).
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(&ctx.redline)
        .arg("--root")
        .arg(&root)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let (e_fwd, e_back) = (edits(items, 1, false), edits(items, 1, true));
    let fwd = request("f.rs", &e_fwd);
    let back = request("f.rs", &e_back);
    let mut line = String::new();
    let mut el = Duration::ZERO;
    let mut floor_el = Duration::ZERO;
    let mut floor_cpu = Duration::ZERO;
    for i in 0..n {
        let t = Instant::now();
        let req = if i % 2 == 0 { &fwd } else { &back };
        writeln!(
            input,
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"apply\",\"params\":{req}}}"
        )
        .expect("send");
        input.flush().expect("flush");
        line.clear();
        output.read_line(&mut line).expect("receive");
        assert!(
            line.contains("\"written\":true"),
            "serve apply failed: {line}"
        );
        el += t.elapsed();
        let e = if i % 2 == 0 { &e_fwd } else { &e_back };
        let e: Vec<(&str, &str)> = e.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (t, c) = (Instant::now(), own_cpu());
        floor_edit(&fdir.join("f.rs"), false, &e);
        floor_el += t.elapsed();
        floor_cpu += own_cpu().saturating_sub(c);
    }
    drop(input);
    // The server's CPU time from wait4 (it exits at the end of its input).
    let pid = child.id() as libc::pid_t;
    let (mut status, mut ru) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) } == pid;
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let serve_cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
    println!(
        "\nserve: {n} sequential apply requests (one-line edit, one file), each followed by the floor's edit in a loop"
    );
    println!(
        "  floor {:.0} req/s ({:.2} ms each)   redline serve {:.0} req/s ({:.2} ms each)   ratio {:.2}x",
        n as f64 / floor_el.as_secs_f64(),
        ms(floor_el) / n as f64,
        n as f64 / el.as_secs_f64(),
        ms(el) / n as f64,
        el.as_secs_f64() / floor_el.as_secs_f64()
    );
    if reaped {
        println!(
            "  cpu a request: floor {:.0} us   redline serve {:.0} us (its whole process over {n} requests)",
            floor_cpu.as_secs_f64() * 1e6 / n as f64,
            serve_cpu.as_secs_f64() * 1e6 / n as f64,
        );
    }
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&fdir);
}

/// SHA-256 throughput of the hashing crate on a 100 MB buffer in this process.
fn hash_speed() {
    let buf: Vec<u8> = (0..100_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        std::hint::black_box(Sha256::digest(&buf));
        best = best.min(t.elapsed());
    }
    println!(
        "\nhash: sha2 SHA-256 over 100 MB: {:.2} GB/s (best of 5)",
        buf.len() as f64 / best.as_secs_f64() / 1e9
    );
}

fn fs_type(dir: &Path) -> String {
    Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE,SOURCE", "-T"])
        .arg(dir)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown (no findmnt)".into())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--floor") => return floor(&args[1..]),
        Some("--make") => {
            let size = args[2].parse().expect("--make FILE SIZE");
            let (content, items) = text(size);
            std::fs::write(&args[1], content).expect("write fixture");
            return println!("{items}");
        }
        Some("--hash-speed") => return hash_speed(),
        _ => {}
    }
    let me = std::env::current_exe().expect("current exe");
    let mut redline = PathBuf::from(env!("CARGO_BIN_EXE_redline"));
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/write-bench");
    let mut runs = 30;
    let mut which = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--redline" => redline = it.next().expect("--redline PATH").into(),
            "--dir" => dir = it.next().expect("--dir DIR").into(),
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "small" | "big" | "serve" | "hash" => which.push(a.clone()),
            _ => {} // cargo bench passes --bench
        }
    }
    if which.is_empty() {
        which = vec!["hash".into(), "small".into(), "big".into(), "serve".into()];
    }
    assert!(
        redline.exists(),
        "no redline binary at {} (cargo build --release, or pass --redline)",
        redline.display()
    );
    std::fs::create_dir_all(&dir).expect("bench dir");
    println!(
        "redline write benchmark: {} on {} ({}), medians",
        redline.display(),
        dir.display(),
        fs_type(&dir)
    );
    let ctx = Ctx {
        me,
        redline,
        dir,
        runs,
    };
    for w in &which {
        match w.as_str() {
            "small" => small(&ctx),
            "big" => big(&ctx),
            "hash" => {
                // In a child: the bench process never holds a big buffer (see `fixture`).
                let out = Command::new(&ctx.me)
                    .arg("--hash-speed")
                    .output()
                    .expect("spawn hash");
                print!("{}", String::from_utf8_lossy(&out.stdout));
            }
            _ => serve(&ctx),
        }
    }
}
