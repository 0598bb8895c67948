//! What every canvas chart of the page shares: the theme of the system's colour scheme, sizing the canvas
//! to its frame at the device pixel ratio, redraws on resize and on a light/dark switch, and the tooltip of
//! the point under the pointer ([`ChartCanvas`]).

use leptos::html::{Canvas, Div};
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

/// A canvas chart's state: its canvas and frame, where its points landed, the point under the pointer (CSS
/// pixels in the canvas and the point's index), the frame's measured size, and a counter that asks for a
/// redraw.
#[derive(Debug, Clone, Copy)]
pub struct ChartCanvas {
    /// The canvas.
    pub canvas: NodeRef<Canvas>,
    /// The element whose size the canvas takes (its shape comes from the style sheet: 5 wide for 3 high,
    /// taller on a phone).
    pub frame: NodeRef<Div>,
    /// Bumped to redraw.
    pub redraw: RwSignal<u32>,
    /// Where each point was drawn, in backend pixels.
    pub hits: StoredValue<Vec<Hit>>,
    /// The point under the pointer.
    pub hover: RwSignal<Option<(i32, i32, usize)>>,
    /// The frame's width and height in CSS pixels, measured on the first draw and after a resize only:
    /// reading them on every redraw would force a synchronous layout of the whole page after each input.
    pub size: StoredValue<Option<(u32, u32)>>,
}

impl ChartCanvas {
    /// A chart's state; a resize (which clears the measured width) and a light/dark switch redraw it. Call it
    /// in the chart's component: the resize listener ends with it.
    #[must_use]
    pub fn new() -> ChartCanvas {
        let chart = ChartCanvas {
            canvas: NodeRef::new(),
            frame: NodeRef::new(),
            redraw: RwSignal::new(0),
            hits: StoredValue::new(Vec::new()),
            hover: RwSignal::new(None),
            size: StoredValue::new(None),
        };
        let resize = window_event_listener(leptos::ev::resize, move |_| {
            chart.size.set_value(None);
            chart.redraw.update(|n| *n += 1);
        });
        // The charts are mounted again when the view switches: a removed chart stops listening.
        on_cleanup(move || resize.remove());
        browser::on_theme_change(move || chart.redraw.update(|n| *n += 1));
        chart
    }

    /// For the drawing effect: tracks the redraw counter and sizes the canvas to its frame at the device
    /// pixel ratio. The canvas and the backend pixels per CSS pixel; `None` before the canvas is mounted.
    #[must_use]
    pub fn prepare(&self) -> Option<(web_sys::HtmlCanvasElement, f64)> {
        self.redraw.track();
        let (canvas, frame) = (self.canvas.get()?, self.frame.get()?);
        let (css_width, css_height) = self.size.get_value().unwrap_or_else(|| {
            let measured = (
                frame.client_width().max(200) as u32,
                frame.client_height().max(200) as u32,
            );
            self.size.set_value(Some(measured));
            measured
        });
        let scale = browser::device_pixel_ratio();
        let (w, h) = (
            (f64::from(css_width) * scale).round() as u32,
            (f64::from(css_height) * scale).round() as u32,
        );
        if canvas.width() != w || canvas.height() != h {
            canvas.set_width(w);
            canvas.set_height(h);
        }
        Some((canvas, scale))
    }

    /// Hovers the point nearest the pointer of `ev`, within [`HIT_RADIUS`], or none.
    pub fn on_move(&self, ev: &web_sys::MouseEvent) {
        let Some(canvas) = self.canvas.get_untracked() else {
            return;
        };
        let scale = f64::from(canvas.width()) / f64::from(canvas.client_width().max(1));
        let (x, y) = (
            (f64::from(ev.offset_x()) * scale) as i32,
            (f64::from(ev.offset_y()) * scale) as i32,
        );
        let nearest = self.hits.with_value(|hs| {
            hs.iter()
                .map(|h| ((h.x - x).pow(2) + (h.y - y).pow(2), h))
                .filter(|(d2, _)| f64::from(*d2) <= (HIT_RADIUS * scale).powi(2))
                .min_by_key(|(d2, _)| *d2)
                .map(|(_, h)| (ev.offset_x(), ev.offset_y(), h.index))
        });
        if self.hover.get_untracked() != nearest {
            self.hover.set(nearest);
        }
    }

    /// Steps the hovered point with the keyboard: arrow keys to the next or previous point (in drawing
    /// order), Escape off, so the chart's points are reachable without a pointer.
    pub fn on_key(&self, ev: &web_sys::KeyboardEvent) {
        let step: isize = match ev.key().as_str() {
            "ArrowRight" | "ArrowDown" => 1,
            "ArrowLeft" | "ArrowUp" => -1,
            "Escape" => {
                self.hover.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        let scale = browser::device_pixel_ratio();
        let next = self.hits.with_value(|hs| {
            let n = hs.len() as isize;
            if n == 0 {
                return None;
            }
            let current = self
                .hover
                .get_untracked()
                .map_or(if step > 0 { -1 } else { 0 }, |(_, _, i)| {
                    hs.iter().position(|h| h.index == i).map_or(-1, |p| p as isize)
                });
            let h = hs[(current + step).rem_euclid(n) as usize];
            Some((
                (f64::from(h.x) / scale) as i32,
                (f64::from(h.y) / scale) as i32,
                h.index,
            ))
        });
        self.hover.set(next);
    }

    /// The chart's frame: its canvas (`data-testid` = `testid`, `data-points` = `points()`, an image that
    /// assistive technology names `label`, focusable, its points stepped with the arrow keys), hovering the
    /// point under the pointer, and its tooltip.
    pub fn frame_view(
        self,
        testid: &'static str,
        label: &'static str,
        points: impl Fn() -> String + Send + Sync + 'static,
        tooltip: impl Fn() -> Option<AnyView> + Send + Sync + 'static,
    ) -> impl IntoView {
        view! {
            <div class="chart-frame" node_ref=self.frame>
                <canvas
                    node_ref=self.canvas
                    data-testid=testid
                    data-points=points
                    role="img"
                    tabindex="0"
                    aria-label=label
                    on:keydown=move |ev| self.on_key(&ev)
                    on:blur=move |_| self.hover.set(None)
                    on:mousemove=move |ev| self.on_move(&ev)
                    on:mouseleave=move |_| self.hover.set(None)
                ></canvas>
                {tooltip}
            </div>
        }
    }

    /// The tooltip beside the hovered point (`chart-tooltip`): `lines` gives the text of a point by index
    /// and, when the lines do not say it, the context of its numbers (mode and device), printed as a last,
    /// fainter line.
    pub fn tooltip(&self, lines: impl Fn(usize) -> Option<(Vec<String>, Option<String>)>) -> Option<AnyView> {
        let (x, y, i) = self.hover.get()?;
        let (lines, context) = lines(i)?;
        Some(
            view! {
                <div class="tooltip" role="status" data-testid="chart-tooltip" style=format!("left:{}px;top:{}px", x + 14, y + 14)>
                    {lines.into_iter().map(|l| view! { <div>{l}</div> }).collect_view()}
                    {context.map(|c| view! { <div class="hint">{c}</div> })}
                </div>
            }
            .into_any(),
        )
    }
}

impl Default for ChartCanvas {
    fn default() -> Self {
        ChartCanvas::new()
    }
}
