//! Shared helpers for the cross-crate and real-browser tests: locating the workspace, the built page and the
//! `gpu-endpoint` binary, starting processes on free loopback ports, and driving headless Chromium.

pub mod browser;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The workspace root (the parent of this crate's directory).
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A free TCP port on 127.0.0.1 (bound and released; good enough for tests on one machine).
#[must_use]
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until `port` on 127.0.0.1 accepts TCP connections.
///
/// # Errors
/// A message when `timeout` passes first.
pub fn wait_for_port(port: u16, timeout: Duration) -> Result<(), String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("nothing listened on 127.0.0.1:{port} within {timeout:?}"))
}

/// A child process that is killed when dropped.
#[derive(Debug)]
pub struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// Kills the process now (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Why a browser test cannot run, or `None` when it can.
///
/// The README's test command builds the page and installs chromedriver first, so a missing piece means the
/// test was started some other way; outside CI the test says so and returns, in CI (`CI` set) it fails.
#[must_use]
pub fn browser_prerequisites_missing() -> Option<String> {
    if !workspace_root().join("dist/index.html").exists() {
        return Some(
            "dist/index.html is missing: run `trunk build --release` (README's test command does)".into(),
        );
    }
    if which("chromedriver").is_none() {
        return Some("chromedriver is not on PATH: run scripts/install-tools.sh".into());
    }
    None
}

/// Returns `true` when the browser test should run; panics in CI when it cannot.
#[must_use]
pub fn require_browser() -> bool {
    match browser_prerequisites_missing() {
        None => true,
        Some(reason) if std::env::var_os("CI").is_some() => panic!("browser test cannot run in CI: {reason}"),
        Some(reason) => {
            eprintln!("SKIPPING browser test outside CI: {reason}");
            false
        }
    }
}

/// Finds an executable on PATH.
#[must_use]
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// The `gpu-endpoint` binary built by the same `cargo test` run (target/<profile>/gpu-endpoint).
///
/// # Panics
/// When the binary has not been built (`cargo test --workspace` builds it).
#[must_use]
pub fn endpoint_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test>-<hash> → target/<profile>/gpu-endpoint
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let bin = profile_dir.join("gpu-endpoint");
    assert!(
        bin.is_file(),
        "{} is missing: build it with `cargo build -p gpu-endpoint`",
        bin.display()
    );
    bin
}

/// A running `gpu-endpoint serve` on a free loopback port, serving `dist/`, with a private data directory.
#[derive(Debug)]
pub struct Endpoint {
    /// The process.
    pub process: KillOnDrop,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its data directory (removed on drop).
    pub data_dir: PathBuf,
}

impl Endpoint {
    /// Starts the endpoint with `extra` arguments appended after `serve`.
    ///
    /// # Panics
    /// When the binary is missing or the port never opens.
    #[must_use]
    pub fn start(extra: &[&str]) -> Endpoint {
        let port = free_port();
        let data_dir = unique_temp_dir("endpoint-data");
        let child = Command::new(endpoint_binary())
            .arg("serve")
            .args(["--port", &port.to_string()])
            .arg("--web-dir")
            .arg(workspace_root().join("dist"))
            .arg("--data-dir")
            .arg(&data_dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn gpu-endpoint");
        let process = KillOnDrop(child);
        wait_for_port(port, Duration::from_secs(20)).expect("gpu-endpoint listens");
        Endpoint {
            process,
            port,
            data_dir,
        }
    }

    /// `http://127.0.0.1:<port>`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.process.kill();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// A fresh directory under the system temp dir, unique to this process and call.
#[must_use]
pub fn unique_temp_dir(prefix: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("roofline-{prefix}-{}-{n}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}
