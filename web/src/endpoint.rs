//! The connection to the optional endpoint: its base URL (saved locally; empty = the page's own origin, which
//! serves both the single-server app and an `ssh -L` tunnel), health polled every few seconds, and the device
//! it measures on. Shared with the components as the [`Endpoint`] context.

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
    /// Creates the connection state, starts the health poll (stopped when the owner is cleaned up) and
    /// provides it as context.
    pub fn provide() -> Endpoint {
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
        let endpoint = Endpoint {
            base,
            health,
            connection,
            device,
        };
        provide_context(endpoint);
        endpoint
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

    /// Sets and saves the base URL.
    pub fn set_base(&self, input: &str) {
        let base = normalize_base(input);
        save_base(&base);
        self.base.set(base);
    }
}

/// The endpoint context provided by the app.
///
/// # Panics
/// When called outside the app (a programming error).
#[must_use]
pub fn use_endpoint() -> Endpoint {
    expect_context::<Endpoint>()
}

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn load_base() -> String {
    local_storage()
        .and_then(|s| s.get_item(BASE_KEY).ok().flatten())
        .map(|b| normalize_base(&b))
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
    fn typed_bases_are_normalized() {
        assert_eq!(normalize_base("  "), "");
        assert_eq!(normalize_base("localhost:8000/"), "http://localhost:8000");
        assert_eq!(
            normalize_base("https://gpu.example:443"),
            "https://gpu.example:443"
        );
    }
}
