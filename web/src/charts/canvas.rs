//! What every canvas chart of the page shares: the theme of the system's colour scheme, sizing the canvas
//! to its frame at the device pixel ratio, and the point under the pointer.

use leptos::prelude::*;

use crate::browser;
use crate::charts::draw::{Hit, Theme};

/// Hover radius in CSS pixels.
pub const HIT_RADIUS: f64 = 10.0;

/// The chart colours of the system's light or dark scheme.
#[must_use]
pub fn theme() -> Theme {
    if browser::prefers_dark() {
        Theme::DARK
    } else {
        Theme::LIGHT
    }
}

/// Sizes `canvas` to the width of `frame` at the device pixel ratio, 3 high for 5 wide, and returns the
/// width in CSS pixels and the backend pixels per CSS pixel. The frame is measured only when `width` holds
/// none (the first draw, and after a resize clears it): reading it on every redraw would force a
/// synchronous layout of the whole page after each input.
pub fn fit_canvas(
    canvas: &web_sys::HtmlCanvasElement,
    frame: &web_sys::HtmlDivElement,
    width: StoredValue<Option<u32>>,
) -> (u32, f64) {
    let css_width = width.get_value().unwrap_or_else(|| {
        let measured = frame.client_width().max(320) as u32;
        width.set_value(Some(measured));
        measured
    });
    let scale = browser::device_pixel_ratio();
    let w = (f64::from(css_width) * scale).round() as u32;
    if canvas.width() != w {
        canvas.set_width(w);
        canvas.set_height(w * 3 / 5);
    }
    (css_width, scale)
}

/// The point of `hits` nearest the pointer of `ev` on `canvas`, within [`HIT_RADIUS`]: where to put the
/// tooltip (CSS pixels in the canvas) and the point's index.
#[must_use]
pub fn nearest_hit(
    hits: &[Hit],
    canvas: &web_sys::HtmlCanvasElement,
    ev: &web_sys::MouseEvent,
) -> Option<(i32, i32, usize)> {
    let scale = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
    let (x, y) = (
        (f64::from(ev.offset_x()) * scale) as i32,
        (f64::from(ev.offset_y()) * scale) as i32,
    );
    hits.iter()
        .map(|h| ((h.x - x).pow(2) + (h.y - y).pow(2), h))
        .filter(|(d2, _)| f64::from(*d2) <= (HIT_RADIUS * scale).powi(2))
        .min_by_key(|(d2, _)| *d2)
        .map(|(_, h)| (ev.offset_x(), ev.offset_y(), h.index))
}
