//! Shared helpers of the integration tests: the real app (through `configure`) on the fake backend, the real
//! binary, and the gate of the real-GPU tests.

use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use gpu_endpoint::backend::select::{BackendChoice, BackendOptions, Selected, select};
use gpu_endpoint::http::state::{AppConfig, AppState};
use gpu_endpoint::store::Store;

/// The `gpu-endpoint` binary built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_gpu-endpoint");

/// The user data directory the binary sees in these tests (`XDG_DATA_HOME`): in cargo's scratch directory for
/// integration tests, so a run without `--data-dir` (its store, its device lock) never touches the real
/// user's.
pub fn test_data_home() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("data-home")
}

/// Runs the binary with `args`, without a token in the environment, logging warnings only, and with its user
/// data directory under [`test_data_home`].
pub fn run_binary(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("ROOFLINE_TOKEN")
        .env("RUST_LOG", "warn")
        .env("XDG_DATA_HOME", test_data_home())
        .output()
        .expect("the binary runs")
}

/// A fake-backend app state with a temp store; the TempDir must outlive the app.
pub fn fake_state(token: Option<&str>, delay_ms: u64) -> (web::Data<AppState>, tempfile::TempDir) {
    let options = BackendOptions {
        fake_delay: Duration::from_millis(delay_ms),
        ..BackendOptions::default()
    };
    let selected = select(BackendChoice::Fake, &options).unwrap();
    state_with(selected, token)
}

/// An app state for an arbitrary backend selection.
pub fn state_with(selected: Selected, token: Option<&str>) -> (web::Data<AppState>, tempfile::TempDir) {
    configured_state(selected, |config| config.token = token.map(str::to_owned))
}

/// A fake-backend app state whose configuration `edit` changes.
pub fn fake_state_configured(
    delay_ms: u64,
    edit: impl FnOnce(&mut AppConfig),
) -> (web::Data<AppState>, tempfile::TempDir) {
    let options = BackendOptions {
        fake_delay: Duration::from_millis(delay_ms),
        ..BackendOptions::default()
    };
    configured_state(select(BackendChoice::Fake, &options).unwrap(), edit)
}

/// An app state for `selected` whose configuration `edit` changes.
pub fn configured_state(
    selected: Selected,
    edit: impl FnOnce(&mut AppConfig),
) -> (web::Data<AppState>, tempfile::TempDir) {
    state_in(tempfile::tempdir().unwrap(), selected, edit)
}

/// An app state for `selected` over the store in `dir`'s `data/` (opened, so migrated, here), its
/// configuration changed by `edit`.
pub fn state_in(
    dir: tempfile::TempDir,
    selected: Selected,
    edit: impl FnOnce(&mut AppConfig),
) -> (web::Data<AppState>, tempfile::TempDir) {
    let store = Store::open(&dir.path().join("data")).unwrap();
    let mut config = AppConfig {
        web_dir: dir.path().join("dist"),
        lock_dir: Some(dir.path().join("data")),
        ..AppConfig::default()
    };
    edit(&mut config);
    (
        web::Data::new(AppState::new(selected, Some(Arc::new(store)), config).unwrap()),
        dir,
    )
}

/// Parses an SSE body into (event, data) pairs, ignoring comments.
pub fn parse_sse(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter_map(|frame| {
            let mut event = String::from("message");
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d.to_owned());
                }
            }
            (!data.is_empty()).then(|| (event, data.join("\n")))
        })
        .collect()
}

/// The CUDA device of a real-GPU test, or `None` (the test is skipped) unless `ROOFLINE_GPU_TESTS=1`, so
/// `cargo test --features cuda` passes on a machine without a GPU.
///
/// # Panics
/// When `ROOFLINE_GPU_TESTS=1` and no CUDA device can be selected.
#[cfg(feature = "cuda")]
pub fn gpu_device() -> Option<gpu_endpoint::device::Device> {
    if std::env::var("ROOFLINE_GPU_TESTS").as_deref() != Ok("1") {
        eprintln!("skipped: set ROOFLINE_GPU_TESTS=1 to run the GPU tests");
        return None;
    }
    let selected = select(BackendChoice::Cuda, &BackendOptions::default())
        .expect("ROOFLINE_GPU_TESTS=1 but no CUDA device");
    Some(gpu_endpoint::device::Device::new(Arc::clone(&selected.backend)))
}

/// The real binary (`serve`) on a free loopback port; killed on drop.
pub struct Server {
    /// The server process.
    pub child: std::process::Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    /// `serve --backend fake` with a per-point delay, a data directory of its own and no page.
    pub fn start(fake_delay_ms: u64) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        Server::start_with(
            dir,
            &[
                "--backend",
                "fake",
                "--fake-delay-ms",
                &fake_delay_ms.to_string(),
                "--data-dir",
                data.to_str().unwrap(),
            ],
        )
    }

    /// `serve --port 0 args…` with `dir` as its (empty) page directory, kept until the server is dropped.
    pub fn start_with(dir: tempfile::TempDir, args: &[&str]) -> Server {
        use std::io::BufRead as _;
        let mut child = Server::spawn(dir.path(), args);
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let line = stderr
            .lines()
            .map(Result::unwrap)
            .find(|l| l.starts_with("listening on http://127.0.0.1:"))
            .expect("the server says where it listens");
        let port = line.rsplit(':').next().unwrap().parse().unwrap();
        Server {
            child,
            port,
            _dir: dir,
        }
    }

    /// The process of `serve --port 0 args…` with `web_dir` as its page directory, its stderr piped (it
    /// says where it listens, or why it did not start).
    pub fn spawn(web_dir: &std::path::Path, args: &[&str]) -> std::process::Child {
        std::process::Command::new(BIN)
            .args(["serve", "--port", "0", "--web-dir"])
            .arg(web_dir)
            .args(args)
            .env_remove("ROOFLINE_TOKEN")
            .env("RUST_LOG", "error")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `VmHWM` (peak RSS) and `VmRSS` of the server, in MiB.
    pub fn memory_mib(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| -> f64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .unwrap()
                / 1024.0
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// One request on its own connection (`Connection: close`); returns the status and the body.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        // The server may answer and close before reading a refused body.
        let _ = stream.write_all(body);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default();
        (status, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
