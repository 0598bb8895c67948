//! The connection to the optional endpoint: its base URL (saved locally; empty = the page's own origin, which
//! serves both the single-server app and an `ssh -L` tunnel), health polled every few seconds, and the device
//! it measures on. Part of the app state (`crate::state::AppState::endpoint`).

use std::time::Duration;

use leptos::prelude::*;
use roofline_core::wire::{DeviceInfo, Health};

use crate::api::{self, ApiError};

/// localStorage key of the base URL.
pub const BASE_KEY: &str = "roofline.endpoint";
/// How often `/api/health` is polled, so the badge notices the endpoint leaving and coming back.
pub const HEALTH_POLL: Duration = Duration::from_secs(3);

/// A base URL as typed by the user: trimmed, no trailing slash, `http://` added to a bare `host:port`.
#[must_use]
pub fn normalize_base(input: &str) -> String {
    let trimmed = input.trim().trim_end_matches('/');
    if trimmed.is_empty() || trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("http://{trimmed}")
    }
}

/// Why a typed endpoint URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    /// Spaces or other whitespace inside it.
    #[error("'{0}' is not a URL: it contains spaces")]
    Whitespace(String),
    /// A scheme other than http or https.
    #[error("'{0}': the endpoint is reached over http:// or https://")]
    Scheme(String),
    /// No host, or a host or port that is not one.
    #[error("'{0}' names no host[:port] (e.g. localhost:8000, gpu.example.com, 10.0.0.2:8000)")]
    Host(String),
}

/// The base URL of `input` ([`normalize_base`]) when it is one: empty (the page's own server), or http(s)
/// with a host of letters, digits, dots and dashes (or a bracketed IPv6 address) and an optional port.
///
/// # Errors
/// [`BaseUrlError`] saying what is wrong.
pub fn parse_base(input: &str) -> Result<String, BaseUrlError> {
    let base = normalize_base(input);
    if base.is_empty() {
        return Ok(base);
    }
    if base.chars().any(char::is_whitespace) {
        return Err(BaseUrlError::Whitespace(input.trim().to_owned()));
    }
    let Some((scheme, rest)) = base.split_once("://") else {
        return Err(BaseUrlError::Scheme(base));
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(BaseUrlError::Scheme(base));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (host, port) = match authority.find(']') {
        // A bracketed IPv6 address: the port, if any, follows the bracket.
        Some(end) if authority.starts_with('[') => {
            let (h, rest) = authority.split_at(end + 1);
            (
                h,
                (!rest.is_empty()).then(|| rest.strip_prefix(':').unwrap_or("x")),
            )
        }
        _ => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let host_ok = if let Some(v6) = host.strip_prefix('[') {
        v6.strip_suffix(']')
            .is_some_and(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_hexdigit() || c == ':'))
    } else {
        !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
    };
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p > 0));
    if host_ok && port_ok {
        Ok(base)
    } else {
        Err(BaseUrlError::Host(base))
    }
}

/// Whether the endpoint answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// The first health check has not finished.
    Checking,
    /// `/api/health` answered.
    Online,
    /// Nothing answered; the page keeps predicting locally.
    Offline,
}

impl Connection {
    /// `checking`, `online` or `offline` (the badge's text and `data-value`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Connection::Checking => "checking",
            Connection::Online => "online",
            Connection::Offline => "offline",
        }
    }
}

/// The endpoint as the page sees it (a context value; every field is a cheap reactive handle).
#[derive(Clone, Copy)]
pub struct Endpoint {
    /// Base URL; empty = same origin.
    pub base: RwSignal<String>,
    /// The latest `/api/health` answer, refreshed every [`HEALTH_POLL`].
    pub health: LocalResource<Result<Health, ApiError>>,
    /// Derived from `health`; changes only when the state does.
    pub connection: Memo<Connection>,
    /// `/api/device`, fetched whenever the endpoint comes online; `None` while offline.
    pub device: LocalResource<Option<DeviceInfo>>,
}

impl Endpoint {
    /// Creates the connection state and starts the health poll (stopped when the owner is cleaned up).
    #[must_use]
    pub fn start() -> Endpoint {
        let base = RwSignal::new(load_base());
        let tick = RwSignal::new(0u32);
        if let Ok(handle) =
            set_interval_with_handle(move || tick.update(|n| *n = n.wrapping_add(1)), HEALTH_POLL)
        {
            on_cleanup(move || handle.clear());
        }
        let health = LocalResource::new(move || {
            tick.track();
            let base = base.get();
            async move { api::health(&base).await }
        });
        let connection = Memo::new(move |_| match health.get() {
            None => Connection::Checking,
            Some(Ok(_)) => Connection::Online,
            Some(Err(_)) => Connection::Offline,
        });
        let device = LocalResource::new(move || {
            let online = connection.get() == Connection::Online;
            let base = base.get();
            async move {
                if online {
                    api::device(&base).await.ok()
                } else {
                    None
                }
            }
        });
        Endpoint {
            base,
            health,
            connection,
            device,
        }
    }

    /// The base URL, untracked (for event handlers).
    #[must_use]
    pub fn base_now(&self) -> String {
        self.base.get_untracked()
    }

    /// Whether the endpoint answered its last health check.
    #[must_use]
    pub fn is_online(&self) -> bool {
        self.connection.get() == Connection::Online
    }

    /// Sets and saves the base URL when it is one.
    ///
    /// # Errors
    /// [`BaseUrlError`]: nothing is changed.
    pub fn set_base(&self, input: &str) -> Result<(), BaseUrlError> {
        let base = parse_base(input)?;
        save_base(&base);
        self.base.set(base);
        Ok(())
    }
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn load_base() -> String {
    local_storage()
        .and_then(|s| s.get_item(BASE_KEY).ok().flatten())
        .and_then(|b| parse_base(&b).ok())
        .unwrap_or_default()
}

fn save_base(base: &str) {
    if let Some(s) = local_storage() {
        let result = if base.is_empty() {
            s.remove_item(BASE_KEY)
        } else {
            s.set_item(BASE_KEY, base)
        };
        if let Err(e) = result {
            leptos::logging::warn!("could not save the endpoint URL: {e:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_urls_are_accepted() {
        assert_eq!(parse_base(""), Ok(String::new()));
        assert_eq!(parse_base("localhost:8000"), Ok("http://localhost:8000".into()));
        assert_eq!(
            parse_base("https://gpu.example.com/"),
            Ok("https://gpu.example.com".into())
        );
        assert_eq!(parse_base("http://[::1]:8089"), Ok("http://[::1]:8089".into()));
        assert_eq!(parse_base("http://[::1]"), Ok("http://[::1]".into()));
        assert!(matches!(parse_base("foo bar"), Err(BaseUrlError::Whitespace(_))));
        assert!(matches!(parse_base("ftp://gpu"), Err(BaseUrlError::Scheme(_))));
        for bad in [
            "http://",
            "http://host:port",
            "http://a..b",
            "http://host:70000",
            "http://bad_host",
        ] {
            assert!(matches!(parse_base(bad), Err(BaseUrlError::Host(_))), "{bad}");
        }
    }

    #[test]
    fn typed_bases_are_normalized() {
        assert_eq!(normalize_base("  "), "");
        assert_eq!(normalize_base("localhost:8000/"), "http://localhost:8000");
        assert_eq!(
            normalize_base("https://gpu.example:443"),
            "https://gpu.example:443"
        );
    }
}
