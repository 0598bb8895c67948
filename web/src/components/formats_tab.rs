//! Number-format reference: every format, one in detail, and NVFP4 against MXFP4.

use leptos::prelude::*;
use roofline_core::{Encoding, FormatInfo, Precision, format_catalog, format_info};

use crate::format;
use crate::palette::{css, precision_rgb};

/// Elements in the tensor used to compare storage, 4096×4096.
const COMPARE_ELEMENTS: f64 = 4096.0 * 4096.0;

/// Block text: the scale format as core describes it (e.g. `E8M0 per 32`), or `—`.
fn block_text(f: &FormatInfo) -> String {
    match (f.block_scale, f.scale_format) {
        (_, Some(s)) => s.to_owned(),
        (Some(b), None) => format!("{} elements", b.block_elements),
        _ => "—".to_owned(),
    }
}

/// The sign/exponent/mantissa boxes of one element.
#[component]
fn BitLayout(
    /// The format.
    info: FormatInfo,
) -> impl IntoView {
    let l = info.layout;
    let (mantissa_name, exponent_name) = match info.encoding {
        Encoding::Float => ("M", "E"),
        Encoding::Integer => ("V", "E"),
        Encoding::Codebook => ("I", "E"),
    };
    let bits = std::iter::repeat_n(("S", "sign"), l.sign_bits as usize)
        .chain(std::iter::repeat_n(
            (exponent_name, "exp"),
            l.exponent_bits as usize,
        ))
        .chain(std::iter::repeat_n(
            (mantissa_name, "man"),
            l.mantissa_bits as usize,
        ))
        .map(|(t, class)| view! { <span class=format!("bit {class}")>{t}</span> })
        .collect_view();
    view! {
        <div class="bits" role="img" aria-label=format!("{} sign, {} exponent, {} mantissa bits", l.sign_bits, l.exponent_bits, l.mantissa_bits)>
            {bits}
        </div>
    }
}

/// The Formats tab (its numbers depend on no device or mode: `data-context="static"`): a table of all
/// formats (click a name for its detail, which scrolls into view), a detail card with bit layout, effective
/// bits, range, levels and codebook, and an NVFP4 vs MXFP4 comparison.
#[component]
pub fn FormatsTab() -> impl IntoView {
    let selected = RwSignal::new(Precision::Nvfp4);
    let detail_ref = NodeRef::<leptos::html::Div>::new();
    let show = move |p: Precision| {
        selected.set(p);
        if let Some(el) = detail_ref.get_untracked() {
            el.scroll_into_view_with_bool(true);
        }
    };
    let rows = format_catalog()
        .into_iter()
        .map(|f| {
            let p = f.precision;
            view! {
                <tr class:selected=move || selected.get() == p>
                    <td>
                        <button type="button" class="link" on:click=move |_| show(p)>
                            <span class="swatch" style=format!("background:{}", css(precision_rgb(p)))></span>
                            {f.name}
                        </button>
                    </td>
                    <td class="num">{format::bits(f.effective_bits)}</td>
                    <td>{block_text(&f)}</td>
                    <td class="num">{format::levels(f.levels)}</td>
                    <td class="num">{format::number(f.max_finite)}</td>
                </tr>
            }
        })
        .collect_view();
    let detail = move || {
        let f = format_info(selected.get());
        let codebook = f.codebook.map(|cb| {
            view! {
                <div class="codebook">
                    {cb.iter().map(|v| view! { <span class="chip">{format!("{v}")}</span> }).collect_view()}
                </div>
            }
        });
        view! {
            <div class="format-detail" data-testid="format-detail">
                <h3>{f.name}</h3>
                <p class="hint">{f.description}</p>
                <BitLayout info=f.clone() />
                <dl>
                    <dt>"Effective bits"</dt><dd>{format::bits(f.effective_bits)}</dd>
                    <dt>"Bytes / element"</dt><dd>{format!("{}", f.bytes_per_element)}</dd>
                    <dt>"Block scale"</dt><dd>{block_text(&f)}</dd>
                    <dt>"Largest finite"</dt><dd>{format!("±{}", format::number(f.max_finite))}</dd>
                    <dt>"Levels"</dt><dd>{format::levels(f.levels)}</dd>
                    <dt>"Compute path"</dt><dd>{f.compute_path.name()}{f.storage_only.then_some(" (dequantized before the multiply)")}</dd>
                    <dt>"4096² tensor"</dt><dd>{format::bytes(f.precision.tensor_bytes(COMPARE_ELEMENTS))}</dd>
                </dl>
                {codebook}
            </div>
        }
    };
    let compare = [Precision::Nvfp4, Precision::Mxfp4].map(format_info);
    let compare_row = |label: &'static str, cell: fn(&FormatInfo) -> String| {
        view! { <tr><th scope="row">{label}</th><td>{cell(&compare[0])}</td><td>{cell(&compare[1])}</td></tr> }
    };
    view! {
        <div class="formats" data-context="static">
            <div class="table-box">
            <table class="formats-table" data-testid="formats">
                <thead>
                    <tr>
                        <th scope="col">"Format"</th>
                        <th scope="col" class="num">"bits/elem"</th>
                        <th scope="col">"block"</th>
                        <th scope="col" class="num">"levels"</th>
                        <th scope="col" class="num">"max"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            </div>
            <div node_ref=detail_ref>{detail}</div>
            <table class="compare">
                <caption>"NVFP4 vs MXFP4"</caption>
                <thead><tr><th></th><th scope="col">"NVFP4"</th><th scope="col">"MXFP4"</th></tr></thead>
                <tbody>
                    {compare_row("Block", block_text)}
                    {compare_row("Effective bits", |f| format::bits(f.effective_bits))}
                    {compare_row("4096² tensor", |f| format::bytes(f.precision.tensor_bytes(COMPARE_ELEMENTS)))}
                    {compare_row("Element max", |f| format!("±{}", format::number(f.max_finite)))}
                    {compare_row("Per-tensor scale", |f| f.block_scale.map_or("—".to_owned(), |b| if b.per_tensor_bits > 0 { format!("FP32 ({} bits)", b.per_tensor_bits) } else { "none".to_owned() }))}
                </tbody>
            </table>
        </div>
    }
}
