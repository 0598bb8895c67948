//! The HTTP server around the application factory: worker count, connection timeouts and half-close
//! handling, the same for `gpu-endpoint serve` and for the tests that run the endpoint in-process.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::web;

use crate::http::app::configure;
use crate::http::state::AppState;

/// Time a client has to send a request's head (line and headers) after connecting; slower ones get a 408
/// and are closed, so idle or trickling connections cannot hold the few workers' sockets.
pub const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to acknowledge the shutdown of a connection before it is dropped.
pub const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an idle keep-alive connection stays open between requests (SSE streams are not idle).
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// Where the server accepts connections.
#[derive(Debug)]
pub enum Listen<'a> {
    /// Bind this host and port.
    Address(&'a str, u16),
    /// Accept on an already bound listener.
    Listener(TcpListener),
}

/// The server of `state` on `workers` worker threads (at least 1), not yet awaited, with the addresses it
/// listens on.
///
/// # Errors
/// When the address cannot be bound or the listener used.
pub fn server(
    state: web::Data<AppState>,
    workers: usize,
    listen: Listen<'_>,
) -> std::io::Result<(Server, Vec<SocketAddr>)> {
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .configure(configure(state.clone()))
            .wrap(actix_web::middleware::Logger::default())
    })
    .workers(workers.max(1))
    .client_request_timeout(CLIENT_REQUEST_TIMEOUT)
    .client_disconnect_timeout(CLIENT_DISCONNECT_TIMEOUT)
    .keep_alive(KEEP_ALIVE)
    // A client that closes its side has gone: the connection ends, its handler future is dropped, and a
    // measurement it started is cancelled (http::routes::cancellable) instead of holding the device for nobody.
    .h1_allow_half_closed(false);
    let server = match listen {
        Listen::Address(host, port) => server.bind((host, port))?,
        Listen::Listener(listener) => server.listen(listener)?,
    };
    let addrs = server.addrs();
    Ok((server.run(), addrs))
}
