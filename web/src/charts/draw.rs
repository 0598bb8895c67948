//! Draws [`PlotData`] on any plotters backend: the canvas in the page, an SVG string for export and tests.

use plotters::chart::SeriesAnno;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::charts::series::{Marker, PlotData, PlotPoint};
use crate::format;
use crate::palette::Rgb;

/// Colours of the chart chrome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Background.
    pub background: Rgb,
    /// Axes, text and the bandwidth slope.
    pub foreground: Rgb,
    /// Grid lines.
    pub grid: Rgb,
}

impl Theme {
    /// Slate-on-white.
    pub const LIGHT: Theme = Theme { background: (255, 255, 255), foreground: (30, 41, 59), grid: (203, 213, 225) };
    /// Light-on-slate.
    pub const DARK: Theme = Theme { background: (15, 23, 42), foreground: (226, 232, 240), grid: (51, 65, 85) };
}

/// Where a point landed, in backend pixels, for hover hit-testing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Pixel x.
    pub x: i32,
    /// Pixel y.
    pub y: i32,
    /// Index into [`PlotData::points`].
    pub index: usize,
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// Marker radius in pixels.
const RADIUS: i32 = 6;

/// Draws one marker centred at `at`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    point: &PlotPoint,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let alpha = if point.faint { 0.35 } else { 0.9 };
    let color = rgb(point.color).mix(alpha);
    let r = if point.faint { RADIUS - 2 } else { RADIUS };
    let style = if point.filled { color.filled() } else { color.stroke_width(2) };
    let (x, y) = at;
    if point.outlined {
        area.draw(&Circle::new(at, r + 3, rgb(point.color).stroke_width(2)))?;
    }
    if let Some(tag) = point.tag {
        let font = ("sans-serif", 12).into_font().color(&rgb(point.color));
        area.draw(&Text::new(tag, (x + r + 2, y - r - 10), font))?;
    }
    match point.marker {
        Marker::Circle => area.draw(&Circle::new(at, r, style)),
        Marker::Square => area.draw(&Rectangle::new([(x - r + 1, y - r + 1), (x + r - 1, y + r - 1)], style)),
        Marker::Diamond | Marker::Triangle => {
            let corners = if point.marker == Marker::Diamond {
                vec![(x, y - r - 1), (x + r + 1, y), (x, y + r + 1), (x - r - 1, y)]
            } else {
                vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)]
            };
            if point.filled {
                area.draw(&Polygon::new(corners, style))
            } else {
                let mut closed = corners.clone();
                closed.push(corners[0]);
                area.draw(&PathElement::new(closed, style))
            }
        }
    }
}

/// The chart's coordinate system: log-log.
type LogLog = Cartesian2d<LogCoord<f64>, LogCoord<f64>>;

/// Draws a solid or dashed polyline in data coordinates.
fn draw_line<'a, 'c, DB: DrawingBackend>(
    chart: &'c mut ChartContext<'a, DB, LogLog>,
    line: &[(f64, f64)],
    style: ShapeStyle,
    dashed: bool,
) -> Result<&'c mut SeriesAnno<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    if dashed {
        chart.draw_series(DashedLineSeries::new(line.to_vec(), 8, 5, style))
    } else {
        chart.draw_series(LineSeries::new(line.to_vec(), style))
    }
}

/// Draws the roofline onto `root` and returns where each point landed.
///
/// # Errors
/// The backend's drawing error, as text.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, data: &PlotData, theme: &Theme) -> Result<Vec<Hit>, String> {
    draw_inner(root, data, theme).map_err(|e| e.to_string())
}

fn draw_inner<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    theme: &Theme,
) -> Result<Vec<Hit>, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    root.fill(&rgb(theme.background))?;
    let font = |size: u32| ("sans-serif", size).into_font().color(&fg);
    let mut chart = ChartBuilder::on(root)
        .caption(&data.title, font(16))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d((data.x.0..data.x.1).log_scale(), (data.y.0..data.y.1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("Arithmetic intensity (FLOP/byte)")
        .y_desc("FLOP/s")
        .x_label_formatter(&|v| format::intensity_tick(*v))
        .y_label_formatter(&|v| format::flop_rate_tick(*v))
        .axis_style(fg)
        .label_style(font(12))
        .axis_desc_style(font(13))
        .bold_line_style(rgb(theme.grid).mix(0.6))
        .light_line_style(rgb(theme.grid).mix(0.2))
        .draw()?;

    for slope in &data.slopes {
        let bw = slope.bandwidth;
        let slope_end = slope.ridge.max(data.x.0).min(data.x.1);
        let line = [(data.x.0, bw * data.x.0), (slope_end, bw * slope_end)];
        draw_line(&mut chart, &line, fg.stroke_width(2), slope.dashed)?
            .label(&slope.label)
            .legend(move |(x, y)| PathElement::new([(x, y + 4), (x + 16, y - 4)], fg.stroke_width(2)));
    }
    for roof in &data.roofs {
        let color = rgb(roof.color);
        draw_line(&mut chart, &[(roof.ridge, roof.peak), (data.x.1, roof.peak)], color.stroke_width(2), roof.dashed)?
            .label(&roof.label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(3)));
    }

    let plot = chart.plotting_area();
    let mut hits = Vec::with_capacity(data.points.len());
    for (index, point) in data.points.iter().enumerate() {
        let (x, y) = plot.map_coordinate(&(point.ai, point.flop_per_s));
        draw_marker(root, (x, y), point)?;
        hits.push(Hit { x, y, index });
    }

    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(font(12))
        .background_style(rgb(theme.background).mix(0.85))
        .border_style(rgb(theme.grid))
        .draw()?;
    root.present()?;
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use plotters_svg::SVGBackend;

    use super::*;
    use crate::charts::series::{kernel_points, plot_data};
    use crate::state::{KernelSpec, resolve_hardware};

    #[test]
    fn svg_has_every_roof_label_and_point() {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let data = plot_data(&hw, kernel_points(&KernelSpec::default().evaluate(&hw)));
        let mut svg = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
            draw(&root, &data, &Theme::LIGHT).unwrap()
        };
        assert_eq!(hits.len(), data.points.len());
        assert!(hits.iter().all(|h| (0..900).contains(&h.x) && (0..560).contains(&h.y)));
        for roof in &data.roofs {
            assert!(svg.contains(&roof.label), "missing {}", roof.label);
        }
        assert!(svg.contains("DRAM 273 GB/s"));
        assert!(svg.matches("<circle").count() >= data.points.len());
    }
}
