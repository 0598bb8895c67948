//! A server-sent-event stream (`web_sys::EventSource`) with named-event handlers; closed when dropped.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Event, EventSource, MessageEvent};

/// A handler of one named event, called with the event's data.
pub type Handler = Box<dyn FnMut(String)>;

/// An open event stream and the closures it calls.
#[derive(Debug)]
pub struct EventStream {
    source: EventSource,
    _listeners: Vec<Closure<dyn FnMut(Event)>>,
}

impl EventStream {
    /// Opens `url` and calls the handler of each named event with the event's data. `on_error` is called
    /// when the connection fails, with `true` when the browser gave up (an HTTP error status, or the server
    /// closed a stream it will not reopen) rather than reconnecting.
    ///
    /// # Errors
    /// When the browser refuses the URL.
    pub fn open(
        url: &str,
        handlers: Vec<(&'static str, Handler)>,
        mut on_error: Box<dyn FnMut(bool)>,
    ) -> Result<EventStream, String> {
        let source = EventSource::new(url).map_err(|e| format!("{e:?}"))?;
        let mut listeners = Vec::new();
        for (name, mut handler) in handlers {
            let listener = Closure::<dyn FnMut(Event)>::new(move |event: Event| {
                if let Some(data) = event.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()) {
                    handler(data);
                }
            });
            source
                .add_event_listener_with_callback(name, listener.as_ref().unchecked_ref())
                .map_err(|e| format!("{e:?}"))?;
            listeners.push(listener);
        }
        let watched = source.clone();
        let error = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
            on_error(watched.ready_state() == EventSource::CLOSED)
        });
        source.set_onerror(Some(error.as_ref().unchecked_ref()));
        listeners.push(error);
        Ok(EventStream {
            source,
            _listeners: listeners,
        })
    }

    /// Closes the connection; no handler is called afterwards.
    pub fn close(&self) {
        self.source.set_onerror(None);
        self.source.close();
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.close();
    }
}
