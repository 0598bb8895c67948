//! Shared helpers for the cross-crate and real-browser tests: locating the workspace and the built page,
//! starting `gpu-endpoint` in this process on a free loopback port, marking skipped tests, and driving
//! headless Chromium ([`browser`]).

pub mod browser;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::dev::{Server, ServerHandle};

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
/// [`std::io::ErrorKind::TimedOut`] when `timeout` passes first.
pub fn wait_for_port(port: u16, timeout: Duration) -> std::io::Result<()> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("nothing listened on 127.0.0.1:{port} within {timeout:?}"),
    ))
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

/// The first word of the line a skipped test prints on the real stderr, `SKIPPED <test name>: <reason>`;
/// `scripts/test.sh` counts and lists these lines, so a skipped test is never counted as passed.
pub const SKIP_MARKER: &str = "SKIPPED";

/// Prints the skip marker line for the running test (libtest names each test's thread after the test).
///
/// It goes to the process's stderr directly, not through `eprintln!`, which libtest captures and shows only
/// for failing tests.
pub fn mark_skipped(reason: &str) {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("<unnamed test>");
    let _ = writeln!(std::io::stderr().lock(), "{SKIP_MARKER} {name}: {reason}");
}

/// Why a browser test cannot run, or `None` when it can.
///
/// The README's test command builds the page and installs chromedriver first, so a missing piece means the
/// test was started some other way.
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

/// Returns `true` when a test of the built page can run (`dist/` with its precompressed wasm). Outside CI a
/// test that cannot run prints the [`SKIP_MARKER`] line and returns `false`; in CI (`CI` set) it fails.
///
/// # Panics
/// In CI, when the page is not built.
#[must_use]
pub fn require_dist() -> bool {
    let dist = workspace_root().join("dist");
    let built = std::fs::read_dir(&dist).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with("_bg.wasm.br"))
    });
    match built {
        true => true,
        false if std::env::var_os("CI").is_some() => {
            panic!("dist/ has no precompressed wasm in CI: run `trunk build --release`")
        }
        false => {
            mark_skipped("dist/ has no precompressed wasm: run `trunk build --release`");
            false
        }
    }
}

/// Returns `true` when the browser test should run. Outside CI a test that cannot run prints the
/// [`SKIP_MARKER`] line and returns `false`; in CI (`CI` set) it fails.
///
/// # Panics
/// In CI, when a prerequisite is missing.
#[must_use]
pub fn require_browser() -> bool {
    match browser_prerequisites_missing() {
        None => true,
        Some(reason) if std::env::var_os("CI").is_some() => panic!("browser test cannot run in CI: {reason}"),
        Some(reason) => {
            mark_skipped(&reason);
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

/// Why an in-process endpoint did not start.
type StartError = Box<dyn std::error::Error + Send + Sync>;

/// The one place this crate names `gpu-endpoint`'s library: the server `gpu-endpoint serve --backend cpu
/// --web-dir <web_dir> --data-dir <data_dir>` runs (the same application factory, configuration defaults and
/// connection settings), accepting on `listener`. Call it inside an actix system.
///
/// # Errors
/// When the backend, the result store or the listener cannot be set up.
fn endpoint_server(listener: TcpListener, web_dir: &Path, data_dir: &Path) -> Result<Server, StartError> {
    use gpu_endpoint::backend::select::{BackendChoice, BackendOptions, select};
    use gpu_endpoint::http::server::{Listen, server};
    use gpu_endpoint::http::state::{AppConfig, AppState};
    use gpu_endpoint::store::Store;

    let selected = select(BackendChoice::Cpu, &BackendOptions::default())?;
    let store = Arc::new(Store::open(data_dir)?);
    let config = AppConfig {
        allowed_hosts: vec!["127.0.0.1".to_owned()],
        web_dir: web_dir.to_owned(),
        lock_dir: Some(data_dir.to_owned()),
        ..AppConfig::default()
    };
    let state = actix_web::web::Data::new(AppState::new(selected, Some(store), config)?);
    Ok(server(state, 2, Listen::Listener(listener))?.0)
}

/// A `gpu-endpoint` server (CPU backend) running in this process on its own thread, on a free loopback port,
/// serving `dist/`, with a private data directory. It stops, and its data directory is removed, on drop.
#[derive(Debug)]
pub struct Endpoint {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its data directory (removed on drop).
    pub data_dir: PathBuf,
    running: Option<(ServerHandle, std::thread::JoinHandle<std::io::Result<()>>)>,
}

impl Endpoint {
    /// Starts the server and returns once it listens.
    ///
    /// # Panics
    /// When the backend, the store or the listener cannot be set up.
    #[must_use]
    pub fn start() -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("the listener's address").port();
        let data_dir = unique_temp_dir("endpoint-data");
        let (web_dir, server_data_dir) = (workspace_root().join("dist"), data_dir.clone());
        let (sender, receiver) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("gpu-endpoint-{port}"))
            .spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    match endpoint_server(listener, &web_dir, &server_data_dir) {
                        Ok(server) => {
                            let _ = sender.send(Ok(server.handle()));
                            server.await
                        }
                        Err(error) => {
                            let _ = sender.send(Err(error.to_string()));
                            Ok(())
                        }
                    }
                })
            })
            .expect("spawn the endpoint thread");
        let handle = receiver
            .recv()
            .expect("the endpoint thread reports")
            .unwrap_or_else(|e| panic!("gpu-endpoint did not start: {e}"));
        Endpoint {
            port,
            data_dir,
            running: Some((handle, thread)),
        }
    }

    /// `http://127.0.0.1:<port>`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops the server now, as a killed process would: open connections drop, the port closes, and this
    /// returns once the server's thread has ended. Stopping twice does nothing.
    ///
    /// # Panics
    /// When the server's thread panicked or the server failed.
    pub fn stop(&mut self) {
        if let Some(ended) = self.shut_down() {
            ended
                .expect("the endpoint thread ends")
                .expect("the endpoint ran");
        }
    }

    /// Sends the server the stop command (its future only waits for completion, which joining the thread
    /// does too) and joins its thread; `None` when it was already stopped.
    fn shut_down(&mut self) -> Option<std::thread::Result<std::io::Result<()>>> {
        let (handle, thread) = self.running.take()?;
        drop(handle.stop(false));
        Some(thread.join())
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.shut_down();
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
