//! Draws [`ParetoData`] on any plotters backend (the canvas in the page, an SVG string in tests): log-log
//! axes of tokens/s per user and output tokens/s per GPU, the SLA limits as vertical lines with the missing
//! side shaded, the Pareto front, one curve per config, and the markers.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::charts::draw::{Axes, Hit, Theme, log_log_chart, px, rgb};
use crate::charts::pareto_series::{ParetoData, ParetoPoint, PointKind};
use crate::charts::series::Marker;
use crate::format;
use crate::palette::Rgb;

/// Below this width in CSS pixels the chart has no title (a phone: the context line above it says the same).
pub const NARROW_CSS_PX: f64 = 560.0;

/// The corners of a triangle or diamond of half-size `r` around `(x, y)`.
fn corners(marker: Marker, (x, y): (i32, i32), r: i32) -> Vec<(i32, i32)> {
    if marker == Marker::Triangle {
        vec![(x, y - r), (x + r, y + r), (x - r, y + r)]
    } else {
        vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    }
}

/// Draws one predicted marker: the config's shape, filled unless it misses TTFT, ringed on the Pareto front
/// and twice (with a tag) when recommended.
fn draw_predicted<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    (marker, color): (Marker, Rgb),
    kind: PointKind,
    theme: &Theme,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let PointKind::Predicted {
        pareto,
        meets_ttft,
        recommended,
    } = kind
    else {
        return Ok(());
    };
    let r = px(if pareto { 5.5 } else { 4.0 }, scale);
    let thin = px(1.5, scale).max(1) as u32;
    let style = if meets_ttft {
        rgb(color).filled()
    } else {
        rgb(color).stroke_width(thin + 1)
    };
    match marker {
        Marker::Circle => area.draw(&Circle::new(at, r, style))?,
        Marker::Square => area.draw(&Rectangle::new(
            [(at.0 - r, at.1 - r), (at.0 + r, at.1 + r)],
            style,
        ))?,
        Marker::Triangle | Marker::Diamond if meets_ttft => {
            area.draw(&Polygon::new(corners(marker, at, r + 1), style))?;
        }
        Marker::Triangle | Marker::Diamond => {
            let mut outline = corners(marker, at, r + 1);
            outline.push(outline[0]);
            area.draw(&PathElement::new(outline, style))?;
        }
    }
    let ring = rgb(theme.foreground).stroke_width(thin);
    if pareto {
        area.draw(&Circle::new(at, r + px(2.5, scale), ring))?;
    }
    if recommended {
        area.draw(&Circle::new(at, r + px(6.0, scale), ring.stroke_width(thin + 1)))?;
        let font = ("sans-serif", 13.0 * scale)
            .into_font()
            .style(FontStyle::Bold)
            .color(&rgb(theme.foreground));
        area.draw(&Text::new(
            "★ recommended",
            (at.0 + r + px(8.0, scale), at.1 - r - px(16.0, scale)),
            font,
        ))?;
    }
    Ok(())
}

/// Draws a measured run: a cross in its config's colour over a background-coloured halo.
fn draw_measured<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    color: Rgb,
    theme: &Theme,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let r = px(6.0, scale);
    for (width, c) in [(5.0, theme.background), (2.5, color)] {
        let style = rgb(c).stroke_width(px(width, scale).max(1) as u32);
        area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], style))?;
        area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], style))?;
    }
    Ok(())
}

/// Draws the Pareto chart onto `root` and returns where each of `data.points` landed (backend pixels) for
/// hover. `scale` is backend pixels per CSS pixel (the device pixel ratio on a canvas, 1 for SVG).
///
/// # Errors
/// The backend's drawing error.
pub fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ParetoData,
    theme: &Theme,
    scale: f64,
) -> Result<Vec<Hit>, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    let font = |size: f64| ("sans-serif", size * scale).into_font().color(&fg);
    // A narrow chart (a phone) has no room for the title: the context line above it says the same.
    let wide = f64::from(root.dim_in_pixel().0) / scale >= NARROW_CSS_PX;
    let axes = Axes {
        caption: wide.then_some((data.title.as_str(), 14.0)),
        x: data.x,
        y: data.y,
        names: ("tokens/s per user (1 / TPOT)", "output tokens/s per GPU"),
        ticks: (format::number, format::number),
    };
    let mut chart = log_log_chart(root, &axes, theme, scale)?;

    // Each limit shades the side that misses it and draws its line, labelled at the top.
    let (y_lo, y_hi) = data.y;
    for limit in &data.limits {
        let x = limit.tokens_per_s_per_user;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(data.x.0, y_lo), (x.max(data.x.0), y_hi)],
            rgb(theme.grid).mix(0.18).filled(),
        )))?;
        chart.draw_series(DashedLineSeries::new(
            [(x, y_lo), (x, y_hi)],
            px(6.0, scale),
            px(4.0, scale),
            fg.stroke_width(px(1.5, scale).max(1) as u32),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            limit.label.clone(),
            (x * 1.03, y_hi / 1.25),
            font(12.0),
        )))?;
    }
    chart.draw_series(LineSeries::new(
        data.front.iter().copied(),
        fg.mix(0.25).stroke_width(px(7.0, scale) as u32),
    ))?;
    for curve in &data.curves {
        let style = rgb(curve.color).stroke_width(px(2.0, scale) as u32);
        if curve.dashed {
            chart.draw_series(DashedLineSeries::new(
                curve.line.iter().copied(),
                px(7.0, scale),
                px(4.0, scale),
                style,
            ))?;
        } else {
            chart.draw_series(LineSeries::new(curve.line.iter().copied(), style))?;
        }
    }

    let plot = chart.plotting_area();
    let mut hits = Vec::with_capacity(data.points.len());
    for (index, point) in data.points.iter().enumerate() {
        let ParetoPoint {
            tokens_per_s_per_user: x,
            output_tokens_per_s_per_gpu: y,
            curve,
            kind,
            ..
        } = point;
        let curve = &data.curves[*curve];
        let at = plot.map_coordinate(&(*x, *y));
        match kind {
            PointKind::Measured => draw_measured(root, at, curve.color, theme, scale)?,
            predicted => draw_predicted(root, at, (curve.marker, curve.color), *predicted, theme, scale)?,
        }
        hits.push(Hit {
            x: at.0,
            y: at.1,
            index,
        });
    }
    root.present()?;
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use plotters_svg::SVGBackend;
    use roofline_core::Sla;

    use super::*;
    use crate::charts::pareto_series::pareto_data;
    use crate::serving::measured::Compared;
    use crate::serving::tests::{h100_llama, swept};

    #[test]
    fn svg_has_the_axes_the_limits_the_pick_and_every_point() {
        let (s, hw) = h100_llama();
        let (key, sweep) = swept(&s, &hw);
        let sla = Sla {
            tpot_max_s: Some(0.02),
            ..Sla::default()
        };
        let data = pareto_data(
            &sweep,
            &sla.evaluate(&sweep),
            &Compared::default(),
            &hw.name,
            &key.title(),
        );
        let mut svg = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut svg, (900, 540)).into_drawing_area();
            draw_pareto(&root, &data, &Theme::LIGHT, 1.0).unwrap()
        };
        assert_eq!(hits.len(), data.points.len());
        assert!(
            hits.iter()
                .all(|h| (0..900).contains(&h.x) && (0..540).contains(&h.y))
        );
        for text in [
            "tokens/s per user (1 / TPOT)",
            "output tokens/s per GPU",
            "TPOT ≤ 20.0 ms",
            "★ recommended",
            "reference · NVIDIA H100 SXM5 80GB · Llama 3.1 8B · 1 GPU",
        ] {
            assert!(svg.contains(text), "missing {text}");
        }
        // At phone width the title is left to the page's context line.
        let mut narrow = String::new();
        {
            let root = SVGBackend::with_string(&mut narrow, (360, 216)).into_drawing_area();
            draw_pareto(&root, &data, &Theme::LIGHT, 1.0).unwrap();
        }
        assert!(!narrow.contains("NVIDIA H100") && narrow.contains("TPOT ≤ 20.0 ms"));
        // More tokens/s per user is further right, more output per GPU higher (smaller y in pixels).
        let (a, b) = (&data.points[0], &data.points[1]);
        assert!(a.tokens_per_s_per_user > b.tokens_per_s_per_user && hits[0].x > hits[1].x);
        assert!(a.output_tokens_per_s_per_gpu < b.output_tokens_per_s_per_gpu && hits[0].y > hits[1].y);
    }
}
