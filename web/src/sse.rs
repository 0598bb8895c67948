//! A server-sent-event stream (gloo-net's `EventSource`) with named-event handlers, closed when dropped, and
//! the slot of the one stream a job tracker follows.

use std::cell::RefCell;

use futures_util::StreamExt;
use futures_util::stream::{self, AbortHandle};
use gloo_net::eventsource::futures::EventSource;
use leptos::prelude::{LocalStorage, SetValue, StoredValue, WithValue, on_cleanup};
use serde::de::DeserializeOwned;

/// A handler of one named event, called with the event's data.
pub type Handler = Box<dyn FnMut(String)>;

/// A handler that decodes an event's JSON data and passes it on (undecodable events are logged and dropped).
pub fn on_json<T: DeserializeOwned + 'static>(mut f: impl FnMut(T) + 'static) -> Handler {
    Box::new(move |data| match serde_json::from_str::<T>(&data) {
        Ok(event) => f(event),
        Err(e) => leptos::logging::warn!("unreadable event: {e}"),
    })
}

/// The browser refused to open an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the browser refused the event stream {url}: {reason}")]
pub struct StreamError {
    /// The stream's URL.
    pub url: String,
    /// The browser's error, as it prints.
    pub reason: String,
}

/// An open event stream; a task feeds its events to the handlers until it is closed.
#[derive(Debug)]
pub struct EventStream {
    source: RefCell<Option<EventSource>>,
    task: AbortHandle,
}

impl EventStream {
    /// Opens `url` and calls the handler of each named event with the event's data. `on_closed` is called
    /// once when the browser gives up on the connection (an HTTP error status, or the server closed a stream
    /// it will not reopen); while the browser is reconnecting it is not called.
    ///
    /// # Errors
    /// [`StreamError`] when the browser refuses the URL or an event name.
    pub fn open(
        url: &str,
        mut handlers: Vec<(&'static str, Handler)>,
        on_closed: Box<dyn FnOnce()>,
    ) -> Result<EventStream, StreamError> {
        let refused = |reason: String| StreamError {
            url: url.to_owned(),
            reason,
        };
        let mut source = EventSource::new(url).map_err(|e| refused(e.to_string()))?;
        let subscriptions = handlers
            .iter()
            .map(|(name, _)| source.subscribe(*name).map_err(|e| refused(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        // gloo-net reports an error only once the connection is closed, not while the browser reconnects.
        let (mut events, task) = stream::abortable(stream::select_all(subscriptions));
        wasm_bindgen_futures::spawn_local(async move {
            while let Some(event) = events.next().await {
                let Ok((name, message)) = event else {
                    on_closed();
                    return;
                };
                if let (Some((_, handler)), Some(data)) = (
                    handlers.iter_mut().find(|(n, _)| *n == name),
                    message.data().as_string(),
                ) {
                    handler(data);
                }
            }
        });
        Ok(EventStream {
            source: RefCell::new(Some(source)),
            task,
        })
    }

    /// Closes the connection; no handler is called afterwards.
    pub fn close(&self) {
        self.task.abort();
        self.source.take();
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.close();
    }
}

/// The event stream of the job a tracker follows: one at a time (opening another closes the previous one),
/// closed when the tracker's owner is cleaned up.
#[derive(Debug, Clone, Copy)]
pub struct JobStream(StoredValue<Option<EventStream>, LocalStorage>);

impl JobStream {
    /// An empty slot, closed on the current owner's cleanup.
    #[must_use]
    pub fn scoped() -> JobStream {
        let stream = JobStream(StoredValue::new_local(None));
        on_cleanup(move || stream.close());
        stream
    }

    /// Opens `url` in place of the previous stream ([`EventStream::open`]).
    ///
    /// # Errors
    /// [`StreamError`] when the browser refuses the URL or an event name.
    pub fn open(
        &self,
        url: &str,
        handlers: Vec<(&'static str, Handler)>,
        on_closed: Box<dyn FnOnce()>,
    ) -> Result<(), StreamError> {
        let stream = EventStream::open(url, handlers, on_closed)?;
        self.0.set_value(Some(stream));
        Ok(())
    }

    /// Closes the stream, if one is open; no handler is called afterwards.
    pub fn close(&self) {
        self.0.with_value(|s| {
            if let Some(s) = s {
                s.close()
            }
        });
    }
}
