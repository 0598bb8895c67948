//! Chart exports: a chart that draws itself with a caption under it ([`Captioned`]) downloads as a PNG
//! (an offscreen canvas at twice the device pixel ratio or more) or as an SVG the size of its canvas.

use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;
use plotters_svg::SVGBackend;

use crate::browser;
use crate::charts::canvas::theme;
use crate::charts::draw::Captioned;

/// Why a chart export failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// The browser gave no canvas, or no 2D context on it.
    #[error("the browser made no canvas to draw the export on")]
    NoCanvas,
    /// Drawing or encoding failed; the backend's or the browser's words.
    #[error("export failed: {0}")]
    Failed(String),
}

/// An offscreen canvas for a PNG export of `canvas` with `extra_css` more CSS pixels of height (a title and
/// a footer), at twice the device pixel ratio or more: the canvas and its backend pixels per CSS pixel.
/// `None` when the browser makes no canvas.
#[must_use]
fn export_canvas(
    canvas: &web_sys::HtmlCanvasElement,
    extra_css: f64,
) -> Option<(web_sys::HtmlCanvasElement, f64)> {
    use wasm_bindgen::JsCast;
    let scale = browser::device_pixel_ratio().max(2.0);
    let css = (
        f64::from(canvas.client_width().max(320)),
        f64::from(canvas.client_height().max(192)),
    );
    let offscreen = document()
        .create_element("canvas")
        .ok()
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())?;
    offscreen.set_width((css.0 * scale).round() as u32);
    offscreen.set_height(((css.1 + extra_css) * scale).round() as u32);
    Some((offscreen, scale))
}

/// Downloads `chart` as `file` (a PNG) with `caption` under it, drawn on an offscreen canvas the size of
/// `canvas` at twice the device pixel ratio or more; returns its size in pixels.
///
/// # Errors
/// [`ExportError`] when the browser makes no canvas or drawing or encoding fails.
pub fn export_png<C: Captioned>(
    canvas: &web_sys::HtmlCanvasElement,
    chart: &C,
    caption: &str,
    file: &str,
) -> Result<(u32, u32), ExportError> {
    let (target, scale) = export_canvas(canvas, C::EXTRA_CSS_PX).ok_or(ExportError::NoCanvas)?;
    let (w, h) = (target.width(), target.height());
    let backend = CanvasBackend::with_canvas_object(target.clone()).ok_or(ExportError::NoCanvas)?;
    chart
        .draw_captioned(&backend.into_drawing_area(), &theme(), scale, caption)
        .map_err(|e| ExportError::Failed(e.to_string()))?;
    let url = target
        .to_data_url()
        .map_err(|e| ExportError::Failed(format!("{e:?}")))?;
    browser::download_url(&url, file);
    Ok((w, h))
}

/// Downloads `chart` as `file` (an SVG the size of `canvas`) with `caption` under it, and returns it.
///
/// # Errors
/// [`ExportError::Failed`] when drawing fails.
pub fn export_svg<C: Captioned>(
    canvas: &web_sys::HtmlCanvasElement,
    chart: &C,
    caption: &str,
    file: &str,
) -> Result<String, ExportError> {
    let size = (
        canvas.client_width().max(320) as u32,
        (f64::from(canvas.client_height().max(192)) + C::EXTRA_CSS_PX) as u32,
    );
    let mut svg = String::new();
    chart
        .draw_captioned(
            &SVGBackend::with_string(&mut svg, size).into_drawing_area(),
            &theme(),
            1.0,
            caption,
        )
        .map_err(|e| ExportError::Failed(e.to_string()))?;
    browser::download_text(&svg, file, "image/svg+xml");
    Ok(svg)
}
