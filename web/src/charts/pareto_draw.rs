//! Draws [`ParetoData`] on any plotters backend (the canvas in the page, an SVG string for export and tests),
//! laying out its own axes: linear or log tokens/s per user and output tokens/s per GPU with 1-2-5 ticks
//! whose labels never touch ([`axis::ticks`]), the SLA limits as vertical lines with the missing side
//! shaded and their labels stacked, the fronts, one curve per shown series, the markers, and the answer's
//! tags placed clear of every label. Returns where each point and each x label landed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::axis::{Scale, ticks};
use crate::charts::draw::{Captioned, Hit, Theme, px, rgb, split_footer};
use crate::charts::pareto_series::{ParetoData, PointKind};
use crate::charts::series::Marker;
use crate::format;
use crate::palette::Rgb;

/// The y axis's name (the x axis's is the data's).
pub const Y_AXIS_NAME: &str = "output tokens/s per GPU";

/// Ticks of one axis: each value with its label.
type Ticks = [(f64, String)];

/// An x label drawn: its text and left and right edge, in CSS pixels.
pub type XLabel = (String, f64, f64);

/// What a drawing left: where each of `data.points` landed (backend pixels) and each x-axis label (its text
/// and left and right edge in CSS pixels), for hover and for the page's tests.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Drawn {
    /// One per point, in order.
    pub hits: Vec<Hit>,
    /// The x-axis labels drawn, left to right.
    pub x_labels: Vec<XLabel>,
}

/// A box in backend pixels: (left, top, right, bottom).
type BoxPx = (i32, i32, i32, i32);

fn overlaps(a: BoxPx, b: BoxPx) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The plot rectangle and how values map into it.
struct Frame {
    left: i32,
    top: i32,
    right: i32,
    bottom: i32,
    x: Scale,
    y: Scale,
}

impl Frame {
    fn at(&self, (x, y): (f64, f64)) -> (i32, i32) {
        let fx = self.x.fraction(x).clamp(-0.05, 1.05);
        let fy = self.y.fraction(y).clamp(-0.05, 1.05);
        (
            self.left + (fx * f64::from(self.right - self.left)).round() as i32,
            self.bottom - (fy * f64::from(self.bottom - self.top)).round() as i32,
        )
    }
}

/// Draws a polyline, dashed (`dash` on, `gap` off, backend pixels) or solid.
fn polyline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[(i32, i32)],
    style: ShapeStyle,
    dash: Option<(f64, f64)>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let Some((on, off)) = dash else {
        return area.draw(&PathElement::new(points.to_vec(), style));
    };
    let mut drawing = true;
    let mut left = on;
    for w in points.windows(2) {
        let (a, b) = (
            (f64::from(w[0].0), f64::from(w[0].1)),
            (f64::from(w[1].0), f64::from(w[1].1)),
        );
        let length = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut t = 0.0;
        while t < length {
            let step = left.min(length - t);
            let p = |s: f64| {
                let f = if length > 0.0 { s / length } else { 0.0 };
                (
                    (a.0 + f * (b.0 - a.0)).round() as i32,
                    (a.1 + f * (b.1 - a.1)).round() as i32,
                )
            };
            if drawing {
                area.draw(&PathElement::new(vec![p(t), p(t + step)], style))?;
            }
            t += step;
            left -= step;
            if left <= 1e-9 {
                drawing = !drawing;
                left = if drawing { on } else { off };
            }
        }
    }
    Ok(())
}

/// Draws one marker: `marker` filled or outlined at half-size `r`.
fn shape<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    marker: Marker,
    r: i32,
    style: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x, y) = at;
    let corners = match marker {
        Marker::Circle => return area.draw(&Circle::new(at, r, style)),
        Marker::Square => vec![(x - r, y - r), (x + r, y - r), (x + r, y + r), (x - r, y + r)],
        Marker::Triangle => vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
        Marker::Diamond => vec![(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)],
    };
    if style.filled {
        area.draw(&Polygon::new(corners, style))
    } else {
        let mut closed = corners.clone();
        closed.push(corners[0]);
        area.draw(&PathElement::new(closed, style))
    }
}

/// Draws the axes of `frame` (grid, ticks and labels, names) and returns the x labels drawn.
fn draw_axes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    frame: &Frame,
    (x_ticks, y_ticks): (&Ticks, &Ticks),
    x_name: &str,
    theme: &Theme,
    scale: f64,
) -> Result<Vec<XLabel>, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    let font = |size: f64| ("sans-serif", size * scale).into_font().color(&fg);
    let grid = rgb(theme.grid).mix(0.6).stroke_width(1);
    let mut drawn = Vec::new();
    for (v, text) in x_ticks {
        let (x, _) = frame.at((*v, frame.y.lo));
        root.draw(&PathElement::new(vec![(x, frame.top), (x, frame.bottom)], grid))?;
        let style = font(12.0).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(
            text.clone(),
            (x, frame.bottom + px(6.0, scale)),
            style,
        ))?;
        let width = f64::from(root.estimate_text_size(text, &font(12.0))?.0);
        let centre = f64::from(x) / scale;
        drawn.push((
            text.clone(),
            centre - width / scale / 2.0,
            centre + width / scale / 2.0,
        ));
    }
    for (v, text) in y_ticks {
        let (_, y) = frame.at((frame.x.lo, *v));
        root.draw(&PathElement::new(vec![(frame.left, y), (frame.right, y)], grid))?;
        let style = font(12.0).pos(Pos::new(HPos::Right, VPos::Center));
        root.draw(&Text::new(text.clone(), (frame.left - px(6.0, scale), y), style))?;
    }
    let axis = fg.stroke_width(px(1.0, scale).max(1) as u32);
    root.draw(&PathElement::new(
        vec![
            (frame.left, frame.top),
            (frame.left, frame.bottom),
            (frame.right, frame.bottom),
        ],
        axis,
    ))?;
    let x_style = font(13.0).pos(Pos::new(HPos::Center, VPos::Bottom));
    let (_, h) = root.dim_in_pixel();
    root.draw(&Text::new(
        x_name,
        ((frame.left + frame.right) / 2, h as i32 - px(4.0, scale)),
        x_style,
    ))?;
    let y_name = font(13.0)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(
        Y_AXIS_NAME,
        (px(4.0, scale), (frame.top + frame.bottom) / 2),
        y_name,
    ))?;
    Ok(drawn)
}

/// Draws the Pareto chart onto `root`. `scale` is backend pixels per CSS pixel (the device pixel ratio on a
/// canvas, 1 for SVG).
///
/// # Errors
/// The backend's drawing error.
pub fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ParetoData,
    theme: &Theme,
    scale: f64,
) -> Result<Drawn, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    root.fill(&rgb(theme.background))?;
    let font = |size: f64| ("sans-serif", size * scale).into_font().color(&fg);
    let (w, h) = root.dim_in_pixel();
    let label_font = font(12.0);
    let measure = |t: &str| f64::from(root.estimate_text_size(t, &label_font).map_or(0, |s| s.0));
    let height = f64::from(root.estimate_text_size("0", &label_font).map_or(12, |s| s.1));
    let (top, bottom) = (px(12.0, scale), h as i32 - px(46.0, scale));
    // At most a label every two label heights up the y axis and one label width plus 16 px along x.
    let y_ticks = ticks(&data.y, f64::from(bottom - top), height, format::number, |_| {
        height
    });
    let widest = y_ticks.iter().map(|(_, t)| measure(t)).fold(0.0, f64::max) as i32;
    let left = px(26.0, scale) + widest + px(8.0, scale);
    let right = w as i32 - px(16.0, scale);
    let x_ticks = ticks(
        &data.x,
        f64::from(right - left),
        f64::from(px(16.0, scale)),
        format::number,
        measure,
    );
    let frame = Frame {
        left,
        top,
        right,
        bottom,
        x: data.x,
        y: data.y,
    };
    let x_labels = draw_axes(root, &frame, (&x_ticks, &y_ticks), &data.x_name.0, theme, scale)?;

    // Each limit shades the side that misses it and draws its line; labels stack at the top, never touching.
    let mut taken: Vec<BoxPx> = Vec::new();
    for (i, limit) in data.limits.iter().enumerate() {
        let (x, _) = frame.at((limit.x, data.y.lo));
        root.draw(&Rectangle::new(
            [(frame.left, frame.top), (x, frame.bottom)],
            rgb(theme.grid).mix(0.18).filled(),
        ))?;
        let line = fg.stroke_width(px(1.5, scale).max(1) as u32);
        polyline(
            root,
            &[(x, frame.top), (x, frame.bottom)],
            line,
            Some((6.0 * scale, 4.0 * scale)),
        )?;
        let (tw, th) = root.estimate_text_size(&limit.label, &font(12.0))?;
        let (mut bx, mut by) = (
            x + px(4.0, scale),
            frame.top + px(4.0, scale) + i as i32 * (th as i32 + px(4.0, scale)),
        );
        if bx + tw as i32 > frame.right {
            bx = x - px(4.0, scale) - tw as i32;
        }
        while taken
            .iter()
            .any(|t| overlaps(*t, (bx, by, bx + tw as i32, by + th as i32)))
        {
            by += th as i32 + px(4.0, scale);
        }
        taken.push((bx, by, bx + tw as i32, by + th as i32));
        root.draw(&Text::new(limit.label.clone(), (bx, by), font(12.0)))?;
    }
    for f in &data.fronts {
        let points: Vec<(i32, i32)> = f.line.iter().map(|p| frame.at(*p)).collect();
        if f.primary {
            root.draw(&PathElement::new(
                points,
                fg.mix(0.22).stroke_width(px(7.0, scale) as u32),
            ))?;
        } else if let Some(first) = points.first().copied() {
            let style = rgb(f.color).stroke_width(px(2.5, scale) as u32);
            polyline(root, &points, style, Some((9.0 * scale, 5.0 * scale)))?;
            let (tw, th) = root.estimate_text_size(&f.label, &font(12.0))?;
            let (mut bx, mut by) = (first.0 + px(6.0, scale), first.1 - th as i32 - px(6.0, scale));
            while taken
                .iter()
                .any(|t| overlaps(*t, (bx, by, bx + tw as i32, by + th as i32)))
            {
                by += th as i32 + px(2.0, scale);
            }
            bx = bx.min(frame.right - tw as i32);
            taken.push((bx, by, bx + tw as i32, by + th as i32));
            root.draw(&Text::new(
                f.label.clone(),
                (bx, by),
                font(12.0).color(&rgb(f.color)),
            ))?;
        }
    }
    for s in data.series.iter().filter(|s| s.visible) {
        let points: Vec<(i32, i32)> = s.line.iter().map(|p| frame.at(*p)).collect();
        let style = rgb(s.color).stroke_width(px(2.0, scale) as u32);
        polyline(
            root,
            &points,
            style,
            s.dashed.then_some((7.0 * scale, 4.0 * scale)),
        )?;
    }
    let mut hits = Vec::with_capacity(data.points.len());
    let mut tags: Vec<((i32, i32), i32, &str)> = Vec::new();
    for (index, point) in data.points.iter().enumerate() {
        let at = frame.at((point.x, point.y));
        draw_point(root, at, point.color, point.marker, point.kind, theme, scale)?;
        if let PointKind::Predicted {
            recommended,
            fewest,
            front,
            ..
        } = point.kind
        {
            let r = px(if front { 5.5 } else { 4.0 }, scale);
            if recommended {
                tags.push((at, r, "★ recommended"));
            } else if fewest {
                tags.push((at, r, "fewest GPUs"));
            }
        }
        hits.push(Hit {
            x: at.0,
            y: at.1,
            index,
        });
    }
    for (at, r, text) in tags {
        place_tag(root, &frame, &mut taken, at, r, text, theme, scale)?;
    }
    root.present()?;
    Ok(Drawn { hits, x_labels })
}

/// Height of an export's footer (the title, the scenario and the legend), in CSS pixels.
pub const EXPORT_FOOTER_CSS_PX: f64 = 62.0;

impl Captioned for ParetoData {
    const EXTRA_CSS_PX: f64 = EXPORT_FOOTER_CSS_PX;

    /// Draws the chart with a footer under it: `data`'s title, `caption` (lengths, engine, GPUs) and the shown
    /// series, so an exported image says what it shows.
    ///
    /// # Errors
    /// The backend's drawing error.
    fn draw_captioned<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        theme: &Theme,
        scale: f64,
        caption: &str,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let data = self;
        let [chart, below] = split_footer(root, EXPORT_FOOTER_CSS_PX, theme, scale)?;
        draw_pareto(&chart, data, theme, scale)?;
        let font = |size: f64| {
            ("sans-serif", size * scale)
                .into_font()
                .color(&rgb(theme.foreground))
        };
        below.draw(&Text::new(
            data.title.clone(),
            (px(10.0, scale), px(4.0, scale)),
            font(13.0),
        ))?;
        below.draw(&Text::new(
            caption.to_owned(),
            (px(10.0, scale), px(22.0, scale)),
            font(11.0),
        ))?;
        let shown: Vec<String> = data
            .series
            .iter()
            .filter(|s| s.visible)
            .map(|s| format!("{} {}", s.label, roofline_core::layout_name(&s.layout)))
            .chain(data.fronts.iter().map(|f| f.label.clone()))
            .collect();
        below.draw(&Text::new(
            shown.join(" · "),
            (px(10.0, scale), px(40.0, scale)),
            font(11.0),
        ))?;
        root.present()
    }
}

/// Draws one point: a predicted one in its series' shape (hollow when it misses TTFT, ringed on the front,
/// twice when recommended), a compared device's as a small outline, a measured run as a cross.
fn draw_point<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    color: Rgb,
    marker: Marker,
    kind: PointKind,
    theme: &Theme,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let thin = px(1.5, scale).max(1) as u32;
    match kind {
        PointKind::Predicted {
            front,
            meets_ttft,
            recommended,
            ..
        } => {
            let r = px(if front { 5.5 } else { 4.0 }, scale);
            let style = if meets_ttft {
                rgb(color).filled()
            } else {
                rgb(color).stroke_width(thin + 1)
            };
            shape(root, at, marker, r, style)?;
            let ring = rgb(theme.foreground).stroke_width(thin);
            if front {
                root.draw(&Circle::new(at, r + px(2.5, scale), ring))?;
            }
            if recommended {
                root.draw(&Circle::new(at, r + px(6.0, scale), ring.stroke_width(thin + 1)))?;
            }
        }
        PointKind::Compared => shape(
            root,
            at,
            marker,
            px(4.5, scale),
            rgb(color).stroke_width(thin + 1),
        )?,
        PointKind::Measured => {
            let (x, y) = at;
            let r = px(6.0, scale);
            for (width, c) in [(5.0, theme.background), (2.5, color)] {
                let style = rgb(c).stroke_width(px(width, scale).max(1) as u32);
                root.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], style))?;
                root.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], style))?;
            }
        }
    }
    Ok(())
}

/// Draws `text` beside the point at `at` (radius `r`): above right, below right, above left or below left,
/// the first that stays in the plot and touches no label already placed.
#[allow(clippy::too_many_arguments)]
fn place_tag<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    frame: &Frame,
    taken: &mut Vec<BoxPx>,
    at: (i32, i32),
    r: i32,
    text: &str,
    theme: &Theme,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let font = ("sans-serif", 13.0 * scale)
        .into_font()
        .style(FontStyle::Bold)
        .color(&rgb(theme.foreground));
    let (tw, th) = root.estimate_text_size(text, &font)?;
    let (tw, th) = (tw as i32, th as i32);
    let d = r + px(8.0, scale);
    let candidates = [
        (at.0 + d, at.1 - d - th),
        (at.0 + d, at.1 + d),
        (at.0 - d - tw, at.1 - d - th),
        (at.0 - d - tw, at.1 + d),
    ];
    let inside = |(x, y): (i32, i32)| {
        x >= frame.left && x + tw <= frame.right && y >= frame.top && y + th <= frame.bottom
    };
    let free = |(x, y): (i32, i32)| !taken.iter().any(|t| overlaps(*t, (x, y, x + tw, y + th)));
    let (x, y) = candidates
        .iter()
        .copied()
        .find(|c| inside(*c) && free(*c))
        .or_else(|| candidates.iter().copied().find(|c| inside(*c)))
        .unwrap_or(candidates[0]);
    taken.push((x, y, x + tw, y + th));
    root.draw(&Text::new(text.to_owned(), (x, y), font))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use plotters_svg::SVGBackend;
    use roofline_core::{Sizing, SizingSpec, Sla, find_model};

    use super::*;
    use crate::charts::pareto_series::{ChartInputs, pareto_data};
    use crate::serving::measured::Compared;
    use crate::serving::tests::{h100_llama, swept};

    #[test]
    fn svg_has_the_axes_the_limits_the_pick_and_every_point_with_labels_apart() {
        let (s, hw) = h100_llama();
        let (key, sweep) = swept(&s, &hw);
        let sla = Sla {
            tpot_max_s: Some(0.02),
            tokens_per_user_min: Some(45.0),
            ..Sla::default()
        };
        let model = find_model("llama-3.1-8b").unwrap();
        let sizing = Sizing::new(
            &sweep,
            model,
            &hw,
            &SizingSpec {
                sla,
                percentile: roofline_core::Percentile::P90,
                gpus: &[],
            },
        );
        for log in [false, true] {
            let data = pareto_data(&ChartInputs {
                sweep: &sweep,
                sizing: &sizing,
                measured: &Compared::default(),
                device: "reference · NVIDIA H100",
                title: &key.title(),
                log,
                x_axis: crate::serving_inputs::XAxis::TokensPerUser,
                shown: &BTreeMap::new(),
                allowed: &[],
                others: &[],
                caveats: &BTreeMap::new(),
            });
            for size in [(900, 540), (360, 300)] {
                let mut svg = String::new();
                let drawn = {
                    let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                    draw_pareto(&root, &data, &Theme::LIGHT, 1.0).unwrap()
                };
                assert_eq!(drawn.hits.len(), data.points.len());
                assert!(
                    drawn
                        .hits
                        .iter()
                        .all(|h| (0..size.0 as i32).contains(&h.x) && (0..size.1 as i32).contains(&h.y))
                );
                for text in [
                    data.x_name.0.as_str(),
                    Y_AXIS_NAME,
                    "TPOT ≤ 20.0 ms",
                    "≥ 45 tok/s/user",
                    "★ recommended",
                ] {
                    assert!(svg.contains(text), "missing {text} at {size:?}, log {log}");
                }
                // The export says what it shows.
                let mut exported = String::new();
                {
                    let root =
                        SVGBackend::with_string(&mut exported, (size.0, size.1 + 62)).into_drawing_area();
                    data.draw_captioned(&root, &Theme::LIGHT, 1.0, "ISL 1024 / OSL 1024 · vLLM")
                        .unwrap();
                }
                assert!(exported.contains(&key.title()) && exported.contains("ISL 1024 / OSL 1024 · vLLM"));
                // At least two x labels, none touching another.
                let labels = &drawn.x_labels;
                assert!(labels.len() >= 2, "{labels:?}");
                assert!(labels.windows(2).all(|w| w[0].2 < w[1].1), "{labels:?}");
            }
        }
    }
}
