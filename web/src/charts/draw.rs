//! Draws [`PlotData`] on any plotters backend: the canvas in the page, an SVG string for export and tests.

use plotters::chart::SeriesAnno;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::charts::series::{Marker, PlotData, PlotPoint, legend};
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
    pub const LIGHT: Theme = Theme {
        background: (255, 255, 255),
        foreground: (30, 41, 59),
        grid: (203, 213, 225),
    };
    /// Light-on-slate.
    pub const DARK: Theme = Theme {
        background: (15, 23, 42),
        foreground: (226, 232, 240),
        grid: (51, 65, 85),
    };
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

/// A palette colour as plotters takes it.
pub(crate) fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// Marker radius in CSS pixels.
const RADIUS: f64 = 6.0;

/// Converts CSS pixels to backend pixels at `scale` device pixels per CSS pixel.
pub(crate) fn px(v: f64, scale: f64) -> i32 {
    (v * scale).round() as i32
}

/// Draws one marker centred at `at`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    point: &PlotPoint,
    scale: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let alpha = if point.faint { 0.35 } else { 0.9 };
    let color = rgb(point.color).mix(alpha);
    let r = px(if point.faint { RADIUS - 2.0 } else { RADIUS }, scale);
    let stroke = px(2.0, scale) as u32;
    let style = if point.filled {
        color.filled()
    } else {
        color.stroke_width(stroke)
    };
    let (x, y) = at;
    if point.outlined {
        area.draw(&Circle::new(
            at,
            r + px(3.0, scale),
            rgb(point.color).stroke_width(stroke),
        ))?;
    }
    if let Some(tag) = point.tag {
        let font = ("sans-serif", 12.0 * scale).into_font().color(&rgb(point.color));
        area.draw(&Text::new(
            tag,
            (x + r + px(2.0, scale), y - r - px(10.0, scale)),
            font,
        ))?;
    }
    match point.marker {
        Marker::Circle => area.draw(&Circle::new(at, r, style)),
        Marker::Square => area.draw(&Rectangle::new(
            [(x - r + 1, y - r + 1), (x + r - 1, y + r - 1)],
            style,
        )),
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

/// The charts' coordinate system: log-log.
pub(crate) type LogLog = Cartesian2d<LogCoord<f64>, LogCoord<f64>>;

/// Formats an axis tick.
pub(crate) type Tick = fn(f64) -> String;

/// The frame of a log-log chart: caption, axis ranges, names and tick labels.
pub(crate) struct Axes<'a> {
    /// The caption and its font size in CSS pixels, if one is drawn.
    pub caption: Option<(&'a str, f64)>,
    /// Range of x.
    pub x: (f64, f64),
    /// Range of y.
    pub y: (f64, f64),
    /// Names of x and y.
    pub names: (&'a str, &'a str),
    /// Tick labels of x and y.
    pub ticks: (Tick, Tick),
}

/// Fills `root` with the background, builds log-log axes as `axes` says and draws their mesh in the theme's
/// colours; the chart to draw the series on.
///
/// # Errors
/// The backend's drawing error.
pub(crate) fn log_log_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    axes: &Axes<'_>,
    theme: &Theme,
    scale: f64,
) -> Result<ChartContext<'a, DB, LogLog>, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    root.fill(&rgb(theme.background))?;
    let font = |size: f64| ("sans-serif", size * scale).into_font().color(&fg);
    let mut builder = ChartBuilder::on(root);
    if let Some((caption, size)) = axes.caption {
        builder.caption(caption, font(size));
    }
    let mut chart = builder
        .margin(px(12.0, scale))
        .x_label_area_size(px(44.0, scale))
        .y_label_area_size(px(64.0, scale))
        .build_cartesian_2d((axes.x.0..axes.x.1).log_scale(), (axes.y.0..axes.y.1).log_scale())?;
    let (x_tick, y_tick) = axes.ticks;
    chart
        .configure_mesh()
        .x_desc(axes.names.0)
        .y_desc(axes.names.1)
        .x_label_formatter(&|v| x_tick(*v))
        .y_label_formatter(&|v| y_tick(*v))
        .axis_style(fg)
        .label_style(font(12.0))
        .axis_desc_style(font(13.0))
        .bold_line_style(rgb(theme.grid).mix(0.6))
        .light_line_style(rgb(theme.grid).mix(0.2))
        .draw()?;
    Ok(chart)
}

/// Draws a solid or dashed polyline in data coordinates.
fn draw_line<'a, 'c, DB: DrawingBackend>(
    chart: &'c mut ChartContext<'a, DB, LogLog>,
    points: &[(f64, f64)],
    style: ShapeStyle,
    dashed: bool,
    scale: f64,
) -> Result<&'c mut SeriesAnno<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    if dashed {
        chart.draw_series(DashedLineSeries::new(
            points.to_vec(),
            px(8.0, scale),
            px(5.0, scale),
            style,
        ))
    } else {
        chart.draw_series(LineSeries::new(points.to_vec(), style))
    }
}

/// Draws the roofline onto `root` and returns where each point landed (backend pixels). `scale` is the
/// number of backend pixels per CSS pixel (the device pixel ratio on a canvas, 1 for SVG): text, lines and
/// markers keep their size on high-density screens. The legend is never drawn over the data: the page lists
/// it beside the chart, an export under it ([`Captioned`]); `title` draws the title above the plot
/// (exports; the page shows it as text, where it wraps instead of being clipped).
///
/// # Errors
/// The backend's drawing error.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
    theme: &Theme,
    scale: f64,
    title: bool,
) -> Result<Vec<Hit>, DrawingAreaErrorKind<DB::ErrorType>> {
    let fg = rgb(theme.foreground);
    let line = px(2.0, scale) as u32;
    let axes = Axes {
        caption: title.then_some((data.title.as_str(), 16.0)),
        x: data.x,
        y: data.y,
        names: ("Arithmetic intensity (FLOP/byte)", "FLOP/s"),
        ticks: (format::intensity_tick, format::flop_rate_tick),
    };
    let mut chart = log_log_chart(root, &axes, theme, scale)?;

    for slope in &data.slopes {
        let bw = slope.bandwidth;
        let slope_end = slope.ridge.max(data.x.0).min(data.x.1);
        let points = [(data.x.0, bw * data.x.0), (slope_end, bw * slope_end)];
        draw_line(&mut chart, &points, fg.stroke_width(line), slope.dashed, scale)?;
    }
    for roof in &data.roofs {
        let color = rgb(roof.color);
        let points = [(roof.ridge, roof.peak), (data.x.1, roof.peak)];
        draw_line(&mut chart, &points, color.stroke_width(line), roof.dashed, scale)?;
    }

    let plot = chart.plotting_area();
    let mut hits = Vec::with_capacity(data.points.len());
    for (index, point) in data.points.iter().enumerate() {
        let (x, y) = plot.map_coordinate(&(point.ai, point.flop_per_s));
        draw_marker(root, (x, y), point, scale)?;
        hits.push(Hit { x, y, index });
    }
    root.present()?;
    Ok(hits)
}

/// `root` split into the chart above and a footer of `footer_css` CSS pixels below, filled with the
/// background: where an export prints what it shows.
///
/// # Errors
/// The backend's drawing error.
pub(crate) fn split_footer<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    footer_css: f64,
    theme: &Theme,
    scale: f64,
) -> Result<[DrawingArea<DB, Shift>; 2], DrawingAreaErrorKind<DB::ErrorType>> {
    let (_, height) = root.dim_in_pixel();
    let foot = px(footer_css, scale).max(1) as u32;
    let (chart, below) = root.split_vertically(height.saturating_sub(foot));
    below.fill(&rgb(theme.background))?;
    Ok([chart, below])
}

/// A chart's data that draws with a caption under the chart.
pub trait Captioned {
    /// CSS pixels the export adds under the on-screen chart (its legend and caption).
    const EXTRA_CSS_PX: f64;
    /// Draws the chart on `root` with `caption` under it; `scale` is backend pixels per CSS pixel.
    ///
    /// # Errors
    /// The backend's drawing error.
    fn draw_captioned<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        theme: &Theme,
        scale: f64,
        caption: &str,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>;
}

/// Height of an export's footer (the caption and the legend), in CSS pixels.
pub const EXPORT_FOOTER_CSS_PX: f64 = 44.0;

impl Captioned for PlotData {
    const EXTRA_CSS_PX: f64 = 30.0 + EXPORT_FOOTER_CSS_PX;

    /// Draws the chart with its title above and a footer under it: the caption (device, model, config, mode)
    /// and the legend as text, so the exported image says what it shows.
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
        draw(&chart, data, theme, scale, true)?;
        let font = |size: f64| {
            ("sans-serif", size * scale)
                .into_font()
                .color(&rgb(theme.foreground))
        };
        below.draw(&Text::new(
            caption.to_owned(),
            (px(10.0, scale), px(4.0, scale)),
            font(13.0),
        ))?;
        let (entries, key) = legend(data);
        let text = std::iter::once(key)
            .chain(entries.into_iter().map(|e| e.label))
            .collect::<Vec<_>>()
            .join(" · ");
        below.draw(&Text::new(text, (px(10.0, scale), px(24.0, scale)), font(11.0)))?;
        root.present()
    }
}

#[cfg(test)]
mod tests {
    use plotters_svg::SVGBackend;

    use super::*;
    use crate::charts::series::{kernel_points, plot_data, with_other};
    use crate::presets::resolve_hardware;
    use crate::scenario::KernelSpec;

    /// The default kernel rows on GB10's reference spec, with its datasheet roofs beside them.
    fn gb10_kernel_plot() -> PlotData {
        let hw = resolve_hardware("gb10", &[]).unwrap();
        let reference = hw.reference().unwrap();
        let rows = KernelSpec::default().evaluate(&reference, &roofline_core::Corrections::NONE);
        with_other(plot_data(&reference, kernel_points(&rows)), &hw)
    }

    #[test]
    fn svg_has_every_point_and_no_legend_over_the_data() {
        let data = gb10_kernel_plot();
        let mut svg = String::new();
        let hits = {
            let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
            draw(&root, &data, &Theme::LIGHT, 1.0, true).unwrap()
        };
        assert_eq!(hits.len(), data.points.len());
        assert!(
            hits.iter()
                .all(|h| (0..900).contains(&h.x) && (0..560).contains(&h.y))
        );
        assert!(svg.contains("reference · "), "the title says the mode");
        assert!(svg.matches("<circle").count() >= data.points.len());
        // The page lists the legend beside the chart: no roof label is drawn over the data.
        for roof in &data.roofs {
            assert!(!svg.contains(&roof.label), "{} drawn in the plot", roof.label);
        }
        let mut untitled = String::new();
        {
            let root = SVGBackend::with_string(&mut untitled, (900, 560)).into_drawing_area();
            draw(&root, &data, &Theme::LIGHT, 1.0, false).unwrap();
        }
        assert!(!untitled.contains("reference · "));
    }

    #[test]
    fn the_exported_chart_has_its_caption_and_legend() {
        let data = gb10_kernel_plot();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
            data.draw_captioned(
                &root,
                &Theme::LIGHT,
                2.0,
                "reference · NVIDIA GB10 · Llama 3.1 8B · BF16",
            )
            .unwrap();
        }
        assert!(svg.contains("reference · NVIDIA GB10 · Llama 3.1 8B · BF16"));
        assert!(svg.contains("solid = reference, dashed = datasheet (the ideal bound)"));
        assert!(svg.contains("DRAM "), "the legend's slope entry");
    }
}
