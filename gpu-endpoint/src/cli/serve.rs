//! `gpu-endpoint serve` (the default subcommand): the web page and the API on one address, after refusing a
//! non-loopback bind without a token.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use roofline_cli::lists::bounded_distinct;

use super::{BackendArgs, CliError, open_store, parse_max_point};
use crate::http::server::{Listen, server};
use crate::http::state::{AppConfig, AppState, default_cors_origins};

/// Most `--cors-origin` and most `--allowed-host` values (repeats included; repeats are dropped): each
/// request is checked against them.
pub const MAX_ORIGINS_OR_HOSTS: usize = 64;

/// `serve` options.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to bind; anything but loopback requires a token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0 picks a free one and prints it).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Directory of the built web page.
    #[arg(long, default_value = "dist")]
    pub web_dir: PathBuf,
    /// Bearer token required on every /api route but health.
    #[arg(long, env = "ROOFLINE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// File holding the bearer token, read once at start and trimmed, so the token is in neither the process
    /// list nor the environment (conflicts with --token and ROOFLINE_TOKEN).
    #[arg(long, conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// Allowed CORS origin (repeatable, at most 64; default: trunk's dev server on 127.0.0.1:8080 and
    /// localhost:8080).
    #[arg(long = "cors-origin")]
    pub cors_origins: Vec<String>,
    /// Extra accepted `Host` name, e.g. the machine's DNS name (repeatable, at most 64; loopback names and the
    /// bound address are always accepted).
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// Data directory of the result store (default: the user's data dir + /roofline).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Largest size of the result store, in MB: a point that would grow it beyond is reported as a
    /// `not_stored` failure, as on a full disk (default: no cap but the disk).
    #[arg(long)]
    pub max_store_mb: Option<u64>,
    /// Actix worker threads (default: 2).
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Wall-clock cap of one measured point, in seconds: a point past it stops (at its next check) and is a
    /// `time_limit` failure; the next point runs.
    #[arg(long, default_value = "60", value_parser = parse_max_point)]
    pub max_point_seconds: Duration,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Refuses a non-loopback bind without a token.
///
/// # Errors
/// [`CliError::Usage`].
pub fn check_bind(host: &str, token: Option<&str>) -> Result<(), CliError> {
    let loopback = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback && token.is_none_or(|t| t.trim().is_empty()) {
        return Err(CliError::Usage(format!(
            "refusing to listen on non-loopback address {host} without a token: anyone on the network could run \
             kernels on this machine. Set --token <TOKEN> or ROOFLINE_TOKEN, or bind 127.0.0.1"
        )));
    }
    Ok(())
}

/// The token of `--token-file`, else of `--token` / `ROOFLINE_TOKEN`.
///
/// # Errors
/// [`CliError::Usage`] when the file cannot be read or holds only whitespace.
fn serve_token(args: &ServeArgs) -> Result<Option<String>, CliError> {
    let Some(path) = &args.token_file else {
        return Ok(args.token.clone());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read the token file {}: {e}", path.display())))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(CliError::Usage(format!(
            "the token file {} is empty",
            path.display()
        )));
    }
    Ok(Some(token.to_owned()))
}

/// Runs `serve` until the server stops.
///
/// # Errors
/// [`CliError::Usage`] for an unsafe bind, an unreadable token file or more than [`MAX_ORIGINS_OR_HOSTS`]
/// origins or hosts; [`CliError::Runtime`] when the store cannot be opened or written (the server then does
/// not start) or the address bound.
pub fn run(args: ServeArgs) -> Result<(), CliError> {
    let cors_origins = bounded_distinct("--cors-origin", &args.cors_origins, MAX_ORIGINS_OR_HOSTS)?;
    let allowed_hosts = bounded_distinct("--allowed-host", &args.allowed_hosts, MAX_ORIGINS_OR_HOSTS)?;
    let token = serve_token(&args)?;
    check_bind(&args.host, token.as_deref())?;
    let selected = args.backend.select()?;
    // A store that cannot be written refuses the start (`open_store`): a server that measures but cannot
    // store would report every point as `not_stored`.
    let store = open_store(args.data_dir.as_ref())?;
    if let Some(mb) = args.max_store_mb {
        store
            .limit_size(mb.saturating_mul(1_000_000))
            .map_err(|e| CliError::Runtime(format!("cannot cap the store at {mb} MB: {e}")))?;
    }
    tracing::info!(path = %store.path().display(), max_mb = ?args.max_store_mb, "result store");
    let config = AppConfig {
        token: token.filter(|t| !t.trim().is_empty()),
        cors_origins: if cors_origins.is_empty() {
            default_cors_origins()
        } else {
            cors_origins
        },
        allowed_hosts: std::iter::once(&args.host)
            .chain(&allowed_hosts)
            .map(|h| match h.parse::<IpAddr>() {
                Ok(IpAddr::V6(ip)) => format!("[{ip}]"),
                _ => h.clone(),
            })
            .collect(),
        web_dir: args.web_dir.clone(),
        max_point: args.max_point_seconds,
        lock_dir: store.path().parent().map(std::path::Path::to_path_buf),
        ..AppConfig::default()
    };
    if !config.web_dir.join("index.html").is_file() {
        tracing::warn!(web_dir = %config.web_dir.display(), "web page not built; serving the API and a message page");
    }
    let state = AppState::new(selected, Some(store), config)
        .map_err(|e| CliError::Runtime(format!("cannot create the device lock: {e}")))?;
    let state = actix_web::web::Data::new(state);
    actix_web::rt::System::new().block_on(async move {
        let (server, addrs) = server(state, args.workers, Listen::Address(&args.host, args.port))
            .map_err(|e| CliError::Runtime(format!("cannot bind {}:{}: {e}", args.host, args.port)))?;
        for addr in addrs {
            tracing::info!("listening on http://{addr}");
            eprintln!("listening on http://{addr}");
        }
        server.await.map_err(|e| CliError::Runtime(e.to_string()))
    })
}
