//! A bounded load test on loopback: 20,000 keep-alive requests to /api/health and /api/nvml/status against
//! the fake backend on 127.0.0.1, printing p50/p99. Only a generous sanity bound is asserted.

mod common;

use std::time::{Duration, Instant};

use actix_web::{App, HttpServer};
use common::fake_state;
use gpu_endpoint::configure;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const REQUESTS: usize = 20_000;
const CONNECTIONS: usize = 8;

async fn client(addr: std::net::SocketAddr, n: usize, offset: usize) -> Vec<Duration> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut latencies = Vec::with_capacity(n);
    for i in 0..n {
        let path = if (i + offset).is_multiple_of(2) {
            "/api/health"
        } else {
            "/api/nvml/status"
        };
        let start = Instant::now();
        write
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).await.unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).await.unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).await.unwrap();
        latencies.push(start.elapsed());
    }
    latencies
}

#[actix_web::test]
async fn twenty_thousand_loopback_requests() {
    let (state, _dir) = fake_state(None, 0);
    let server = HttpServer::new(move || App::new().configure(configure(state.clone())))
        .workers(2)
        .bind(("127.0.0.1", 0))
        .unwrap();
    let addr = server.addrs()[0];
    assert!(addr.ip().is_loopback());
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    let start = Instant::now();
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|c| tokio::spawn(client(addr, REQUESTS / CONNECTIONS, c)))
        .collect();
    let mut latencies = Vec::with_capacity(REQUESTS);
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let elapsed = start.elapsed();
    handle.stop(true).await;
    assert_eq!(latencies.len(), REQUESTS);
    latencies.sort();
    let p = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    println!(
        "load: {REQUESTS} requests over {CONNECTIONS} keep-alive connections in {:.2} s ({:.0} req/s); p50 {:?}, p99 {:?}, max {:?}",
        elapsed.as_secs_f64(),
        REQUESTS as f64 / elapsed.as_secs_f64(),
        p(0.5),
        p(0.99),
        latencies.last().unwrap()
    );
    // Sanity bound only (debug build, 2 shared cores).
    assert!(elapsed < Duration::from_secs(120));
}
