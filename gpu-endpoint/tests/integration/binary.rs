//! The real binary: unsafe binds are refused, unknown keys exit 2 with the valid ones listed, `bench` prints
//! JSON, and a `kill -9` in the middle of a job loses no committed point.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BIN, run_binary as run};

#[test]
fn serve_on_a_public_address_without_a_token_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    for args in [
        vec!["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", data],
        vec!["--host", "0.0.0.0", "--port", "0", "--data-dir", data],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("refusing to listen on non-loopback address 0.0.0.0 without a token"),
            "{stderr}"
        );
        assert!(stderr.contains("ROOFLINE_TOKEN"), "{stderr}");
    }
}

/// Sends `GET path` with an optional bearer token over HTTP/1.0 and returns the status code.
fn http_status(port: u16, path: &str, token: Option<&str>) -> u16 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{auth}\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_token_can_come_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "  s3cret-from-file\n").unwrap();
    let data = dir.path().join("data");
    let (token_path, data) = (token_file.to_str().unwrap(), data.to_str().unwrap());
    // --token and --token-file conflict; an empty file is refused.
    let out = run(&[
        "serve",
        "--token",
        "x",
        "--token-file",
        token_path,
        "--data-dir",
        data,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let empty = dir.path().join("empty");
    std::fs::write(&empty, " \n").unwrap();
    let out = run(&[
        "serve",
        "--port",
        "0",
        "--token-file",
        empty.to_str().unwrap(),
        "--data-dir",
        data,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is empty"));

    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--backend",
            "fake",
            "--port",
            "0",
            "--token-file",
            token_path,
        ])
        .args(["--data-dir", data, "--web-dir", dir.path().to_str().unwrap()])
        .env_remove("ROOFLINE_TOKEN")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first stderr line that names the address (after any log lines).
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let line = std::io::BufRead::lines(stderr)
        .map(Result::unwrap)
        .find(|l| l.starts_with("listening on http://127.0.0.1:"))
        .unwrap();
    let port: u16 = line.rsplit(':').next().unwrap().parse().unwrap();
    let statuses = [
        http_status(port, "/api/device", None),
        http_status(port, "/api/device", Some("s3cret-from-fil")),
        http_status(port, "/api/device", Some("s3cret-from-file")),
    ];
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(statuses, [401, 401, 200]);
}

#[test]
fn unknown_keys_exit_2_listing_the_valid_ones() {
    let out = run(&[
        "bench",
        "--shapes",
        "1x64x64",
        "--hardware",
        "nope",
        "--no-store",
        "--backend",
        "fake",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown hardware 'nope'") && stderr.contains("h100_sxm") && stderr.contains("gb10"),
        "{stderr}"
    );
    let out = run(&[
        "bench",
        "--shapes",
        "1x64x64",
        "--precisions",
        "FP7",
        "--no-store",
        "--backend",
        "fake",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FP8_E4M3"));
    let out = run(&["bench", "--shapes", "1x64", "--no-store", "--backend", "fake"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[
        "compare",
        "--shapes",
        "1x64x64",
        "--no-store",
        "--backend",
        "fake",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hardware"));
}

#[test]
fn bench_and_compare_print_what_ran() {
    let out = run(&[
        "bench",
        "--backend",
        "fake",
        "--no-store",
        "--shapes",
        "1x256x256,64x64x64",
        "--precisions",
        "FP32,NVFP4",
        "--hardware",
        "gb10",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["points"].as_array().unwrap().len(), 2);
    assert_eq!(json["failed"].as_array().unwrap().len(), 2);
    assert_eq!(json["points"][0]["point"]["precision"], "FP32");
    // `compare` of a fake 1x256x256 FP32 GEMV on gb10, in `mode`: the CSV's header and first row.
    let compare = |mode: &str| {
        let out = run(&[
            "compare",
            "--backend",
            "fake",
            "--no-store",
            "--shapes",
            "1x256x256",
            "--hardware",
            "gb10",
            "--mode",
            mode,
            "--csv",
        ]);
        assert!(out.status.success());
        let csv = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = csv.lines();
        let header = lines.next().unwrap().to_owned();
        let row: Vec<String> = lines.next().unwrap().split(',').map(str::to_owned).collect();
        (header, row)
    };
    let (header, row) = compare("datasheet");
    assert!(header.ends_with("predicted_us,error_pct"));
    assert_eq!(row[0], "1x256x256");
    assert_eq!(row[1], "FP32");
    // Fake GEMV at 1 TB/s vs gb10 at 273 GB/s: (1/1000 − 1/273) / (1/273) = −72.7 %.
    assert_eq!(row[10], "-72.7");
    // Reference mode: 264,192 B at 89.9 % of 273 GB/s = 1.08 µs, plus the 5 µs matrix floor;
    // (0.264 − 6.077) / 6.077 = −95.7 %.
    let (_, row) = compare("reference");
    assert_eq!(row[10], "-95.7");
}

#[test]
fn runtime_failures_print_one_error_line_and_exit_1_without_a_backtrace() {
    let dir = tempfile::tempdir().unwrap();
    // A data directory below a regular file cannot be created.
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let data = file.join("data");
    let out = Command::new(BIN)
        .args([
            "calibrate",
            "--backend",
            "fake",
            "--data-dir",
            data.to_str().unwrap(),
        ])
        .env_remove("ROOFLINE_TOKEN")
        .env("RUST_LOG", "warn")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: cannot open the store in "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        !stderr.contains("stack backtrace") && !stderr.contains("Stack backtrace"),
        "{stderr}"
    );
}

#[test]
fn device_on_the_cpu_backend_has_no_catalog_key() {
    let out = run(&["device", "--backend", "cpu", "--json"]);
    assert!(out.status.success());
    let info: roofline_core::wire::DeviceInfo = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info.backend, roofline_core::wire::BackendKind::Cpu);
    assert_eq!(info.matched_key, None);
    assert!(info.cpu_cores.unwrap() >= 1);
    // FP32 first: the page's spot check picks the first measurable precision the device predicts.
    assert_eq!(
        info.measurable_precisions,
        [roofline_core::Precision::Fp32, roofline_core::Precision::Fp64]
    );
}

#[test]
fn kill_9_mid_job_keeps_every_committed_point() {
    let dir = tempfile::tempdir().unwrap();
    let shapes: Vec<String> = (1..=40).map(|i| format!("1x{}x64", 64 * i)).collect();
    let mut child = Command::new(BIN)
        .args([
            "bench",
            "--backend",
            "fake",
            "--fake-delay-ms",
            "40",
            "--precisions",
            "FP32",
            "--hardware",
            "gb10",
        ])
        .args([
            "--shapes",
            &shapes.join(","),
            "--data-dir",
            dir.path().to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let db = dir.path().join(gpu_endpoint::store::DB_FILE);
    let start = Instant::now();
    let count = |db: &std::path::Path| -> i64 {
        rusqlite::Connection::open(db)
            .and_then(|c| c.query_row("SELECT count(*) FROM points", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    while count(&db) < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no points committed in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: no destructor, no flush.
    child.kill().unwrap();
    child.wait().unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM points", [], |r| r.get(0))
        .unwrap();
    assert!((5..40).contains(&n), "{n} points");
    drop(conn);
    // Reopened through the store, every committed point decodes and is the shape that was asked for, in order.
    let store = gpu_endpoint::store::Store::open(dir.path()).unwrap();
    let mut rows = store
        .results(&roofline_core::wire::ResultsQuery {
            limit: Some(roofline_core::wire::MAX_RESULTS_LIMIT),
            ..roofline_core::wire::ResultsQuery::default()
        })
        .unwrap()
        .results;
    rows.reverse();
    assert_eq!(rows.len() as i64, n);
    for (idx, row) in rows.iter().enumerate() {
        assert_eq!(row.point.op.shape_label(), format!("1x{}x64", 64 * (idx + 1)));
        assert_eq!(row.point.precision, roofline_core::Precision::Fp32);
        assert!(row.predicted.is_some());
    }
}

/// Starts `serve` on a free loopback port with extra arguments and environment; returns the child and port.
fn spawn_serve(dir: &std::path::Path, args: &[&str], envs: &[(&str, &str)]) -> (std::process::Child, u16) {
    let data = dir.join("data");
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0"])
        .args(args)
        .args([
            "--data-dir",
            data.to_str().unwrap(),
            "--web-dir",
            dir.to_str().unwrap(),
        ])
        .env_remove("ROOFLINE_TOKEN")
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let line = std::io::BufRead::lines(stderr)
        .map(Result::unwrap)
        .find(|l| l.starts_with("listening on http://127.0.0.1:"))
        .unwrap();
    (child, line.rsplit(':').next().unwrap().parse().unwrap())
}

#[test]
fn the_token_can_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, port) = spawn_serve(
        dir.path(),
        &["--backend", "fake"],
        &[("ROOFLINE_TOKEN", "env-s3cret")],
    );
    let statuses = [
        http_status(port, "/api/device", None),
        http_status(port, "/api/device", Some("env-s3cre")),
        http_status(port, "/api/device", Some("env-s3cret-and-more")),
        http_status(port, "/api/device", Some("env-s3cret")),
        http_status(port, "/api/health", None),
    ];
    // Not in the process's arguments.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap_or_default();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(statuses, [401, 401, 401, 200, 200]);
    assert!(!String::from_utf8_lossy(&cmdline).contains("env-s3cret"));
}

/// Sends a measuring `POST /api/analyze` of `precisions` on an open connection (the response is not read).
fn send_analyze(stream: &mut std::net::TcpStream, precisions: &[&str]) {
    use std::io::Write;
    let body = format!(
        r#"{{"M":1,"N":64,"K":64,"precision":"FP32","precisions":{}}}"#,
        serde_json::to_string(precisions).unwrap()
    );
    write!(
        stream,
        "POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
}

/// The status of a one-precision measuring analyze (HTTP/1.0, read to the end).
fn analyze_status(port: u16) -> u16 {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    send_analyze(&mut stream, &["FP32"]);
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_measurement_stops_when_its_client_disconnects() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, port) = spawn_serve(dir.path(), &["--backend", "fake", "--fake-delay-ms", "400"], &[]);
    // 8 points of 400 ms: 3.2 s of device time.
    let precisions = [
        "FP32", "FP16", "BF16", "FP64", "TF32", "FP8_E4M3", "FP8_E5M2", "INT8",
    ];
    let mut long = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    send_analyze(&mut long, &precisions);
    std::thread::sleep(Duration::from_millis(500));
    // The long measurement holds the device.
    let busy = analyze_status(port);
    // The client goes away; the rest of its 2.7 s of points must not keep the device.
    drop(long);
    let gone = Instant::now();
    let mut free_after = None;
    while gone.elapsed() < Duration::from_secs(5) {
        if analyze_status(port) == 200 {
            free_after = Some(gone.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(busy, 503);
    let free_after = free_after.expect("the device stayed busy for 5 s after the client left");
    // The point in flight (≤ 400 ms) plus the poll's own 400 ms point; without cancellation ≥ 2.7 s.
    assert!(free_after < Duration::from_millis(1800), "{free_after:?}");
}

#[test]
fn points_past_max_point_seconds_fail_with_time_limit() {
    let out = run(&[
        "bench",
        "--backend",
        "fake",
        "--fake-delay-ms",
        "100",
        "--max-point-seconds",
        "0.05",
        "--shapes",
        "1x64x64",
        "--precisions",
        "FP32,FP16",
        "--no-store",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["points"].as_array().unwrap().len(), 0);
    let codes: Vec<&str> = report["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["failure"]["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["time_limit", "time_limit"]);
    // The cap must be a positive number of seconds, for every measuring subcommand.
    for (subcommand, value) in [("bench", "0"), ("serve", "-1"), ("calibrate", "soon")] {
        let flag = format!("--max-point-seconds={value}");
        let mut args = vec![subcommand, "--backend", "fake", flag.as_str()];
        if subcommand == "bench" {
            args.extend(["--shapes", "1x64x64"]);
        }
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{subcommand} {value}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("max-point-seconds"));
    }
}
