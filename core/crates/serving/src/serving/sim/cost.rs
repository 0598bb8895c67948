//! Step times for the simulation: `analyze_step` split into parts that each depend on one size, sampled
//! on a grid, memoized and interpolated, so a step costs a few lookups once its grid points are known.

use roofline_analysis::analysis::{ModelAnalysis, StepBatch, analyze_step};
use roofline_analysis::ops::OpKind;
use roofline_analysis::roofline::Bound;
use roofline_base::Error;

use crate::serving::ServingScenario;

/// Grid points below this are every integer; above it, [`PER_OCTAVE`] geometric points per octave.
const EXACT_TOP: u32 = 16;

/// Geometric grid points per octave above [`EXACT_TOP`] (adjacent points 9 % apart).
const PER_OCTAVE: f64 = 8.0;

/// The grid point from which only every second point is sampled (4 per octave from 1024 tokens on, where
/// steps are compute-bound and their parts nearly affine or, for prompt attention, smooth).
const COARSE_FROM: usize = 63;

/// 2^(i/8) for i = 1 … 7: the eighths of an octave.
const EIGHTHS: [f64; 7] = [
    1.090_507_732_665_257_7,
    1.189_207_115_002_721,
    1.296_839_554_651_009_7,
    std::f64::consts::SQRT_2,
    1.542_210_825_407_940_8,
    1.681_792_830_507_429,
    1.834_008_086_409_342_5,
];

/// Grid points: enough for every size a step can have ([`roofline_analysis::ops::MAX_DIM`] = 2^24 tokens).
const POINTS: usize = EXACT_TOP as usize + 8 * 25 + 4;

/// The grid points: 1 … 16, then round(16 · 2^((j − 15) / 8)) (strictly increasing), computed once.
fn points() -> &'static [f64; POINTS] {
    static TABLE: std::sync::OnceLock<[f64; POINTS]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn(|j| {
            if j < EXACT_TOP as usize {
                (j + 1) as f64
            } else {
                (f64::from(EXACT_TOP) * ((j + 1 - EXACT_TOP as usize) as f64 / PER_OCTAVE).exp2()).round()
            }
        })
    })
}

/// The `j`-th grid point.
fn grid_point(j: usize) -> f64 {
    points()[j.min(POINTS - 1)]
}

/// The grid cell holding `x` (clamped to at least 1): its lower index and the position in it, in [0, 1).
fn grid_cell(x: f64) -> (usize, f64) {
    let x = x.max(1.0);
    if x < f64::from(EXACT_TOP) {
        let j = x.floor() as usize - 1;
        return (j, x - (j + 1) as f64);
    }
    let p = points();
    // The octave from the exponent bits of x / 16 (≥ 1), the eighth within it by comparison.
    let y = x / f64::from(EXACT_TOP);
    let octave = ((y.to_bits() >> 52) & 0x7ff) as usize - 1023;
    let mantissa = f64::from_bits((y.to_bits() & ((1 << 52) - 1)) | (1023 << 52));
    let eighth = EIGHTHS.iter().take_while(|&&e| mantissa >= e).count();
    let guess = EXACT_TOP as usize - 1 + 8 * octave + eighth;
    let mut j = guess.min(POINTS - 2);
    while j > EXACT_TOP as usize - 1 && p[j] > x {
        j -= 1;
    }
    while j + 2 < POINTS && p[j + 1] <= x {
        j += 1;
    }
    let (lo, hi) = (p[j], p[j + 1]);
    (j, ((x - lo) / (hi - lo)).min(1.0))
}

/// A grid cell looked up: its lower and upper points and their values.
type Cell = (f64, f64, f64, f64);

/// Cells remembered per grid (steps in a row mostly fall in the same few).
const RECENT: usize = 4;

/// One sampled function of a size: its values at grid points (NaN where not yet analysed), and the cells
/// of the last lookups.
#[derive(Debug, Default)]
struct Grid {
    values: Vec<f64>,
    recent: [Option<Cell>; RECENT],
    next: usize,
}

impl Grid {
    fn get(&self, j: usize) -> Option<f64> {
        self.values.get(j).copied().filter(|v| !v.is_nan())
    }

    fn set(&mut self, j: usize, value: f64) {
        if self.values.len() <= j {
            self.values.resize(j + 1, f64::NAN);
        }
        self.values[j] = value;
        self.recent = [None; RECENT];
    }

    /// The value at `x` when it falls in a cell looked up lately.
    fn cached(&self, x: f64) -> Option<f64> {
        self.recent.iter().flatten().find_map(|&(lo, hi, v_lo, v_hi)| {
            (lo <= x && x < hi).then(|| v_lo + (v_hi - v_lo) * (x - lo) / (hi - lo))
        })
    }

    fn remember(&mut self, cell: Cell) {
        self.recent[self.next] = Some(cell);
        self.next = (self.next + 1) % RECENT;
    }
}

/// Which sampled function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Everything but attention of a step of M prompt tokens that samples no row: B(M).
    Body,
    /// Attention of one whole prompt of n tokens, less its fixed kernel time: Ψ(n).
    PromptAttention,
    /// Everything but attention of a step of L decode rows (one logits row each): B(L), their logits head
    /// and their per-row work (e.g. a linear-attention layer's recurrent state update).
    Rows,
    /// The logits head of n sampled rows (decode rows or prompts that end), read off the ops of the
    /// analysis that gives `Rows`.
    Head,
    /// Attention of one decode row over c cached tokens, less its fixed kernel time: φ(c).
    DecodeAttention,
}

/// A prefill chunk: `tokens` prompt tokens over `prior` tokens of the same sequence already cached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Chunk {
    pub tokens: u32,
    pub prior: u32,
}

/// What one step processes, as the cost model needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct StepLoad<'c> {
    /// Decode rows.
    pub rows: u32,
    /// Their mean context (tokens each row's attention reads).
    pub context: f64,
    /// Query tokens per decode row: 1, or k + 1 when speculative decoding verifies k drafts.
    pub width: u32,
    /// Prompt chunks.
    pub chunks: &'c [Chunk],
    /// Chunks that end their prompt (each samples one row).
    pub completing: u32,
}

/// The step time of a scenario's steps, memoized.
///
/// A step's time is split as `analyze_step` computes it, Σ kernel times + the step launch:
/// - everything but attention depends on the step's tokens M, its decode rows D and its sampling prompts
///   C only (linear layers, norms, quantization, collectives on M; each decode row's logits and per-row
///   work; the sampling prompts' rows in the same logits GEMM): B(M) + [R(D) − B(D)] + [H(D + C) − H(D)];
/// - attention of D decode rows at mean context c: a fixed kernel time + D · φ(c) (its FLOPs and bytes are
///   proportional to the rows);
/// - attention of a chunk of c tokens after p cached ones: max(Ψ(p + c) − Ψ(p), φ(p + c)): the causal
///   pairs of the chunk are those of the longer prompt less those of the shorter, and it reads at least the
///   keys one row reads.
///
/// B, R, H, Ψ and φ are analysed at grid points (every integer to 16, then 8 per octave) and
/// interpolated linearly between them.
#[derive(Debug)]
pub(crate) struct StepCost<'a> {
    scenario: ServingScenario<'a>,
    body: Grid,
    prompt_attention: Grid,
    rows: Grid,
    head: Grid,
    decode_attention: Grid,
    /// Fixed kernel time of the decode attention kernels of a step.
    decode_overhead_s: Option<f64>,
    /// Fixed kernel time of the prefill attention kernels of a step.
    prefill_overhead_s: Option<f64>,
    /// Decode-step bounds by grid cell of rows and context.
    bounds: Vec<((usize, usize), Bound)>,
}

/// A step's time without attention, its attention time and the fixed part of its attention kernels.
fn split(analysis: &ModelAnalysis) -> (f64, f64, f64) {
    let (mut attention, mut fixed) = (0.0, 0.0);
    for op in analysis.ops.iter().filter(|o| o.kind == OpKind::Attention) {
        attention += f64::from(op.count) * op.time_s;
        fixed += f64::from(op.count) * op.kernel_overhead_s;
    }
    (analysis.total_time_s - attention, attention, fixed)
}

/// The logits head of an analysis: the logits GEMM, its input's quantization and its gather over the
/// tensor-parallel group, the ops `analyze_step` adds once per sampled row.
fn head(analysis: &ModelAnalysis) -> f64 {
    analysis
        .ops
        .iter()
        .filter(|o| o.name == "logits" || o.name == "logits_all_gather" || o.name.ends_with("_head_in"))
        .map(|o| f64::from(o.count) * o.time_s)
        .sum()
}

impl<'a> StepCost<'a> {
    pub(crate) fn new(scenario: ServingScenario<'a>) -> StepCost<'a> {
        StepCost {
            scenario,
            body: Grid::default(),
            prompt_attention: Grid::default(),
            rows: Grid::default(),
            head: Grid::default(),
            decode_attention: Grid::default(),
            decode_overhead_s: None,
            prefill_overhead_s: None,
            bounds: Vec::new(),
        }
    }

    /// `analyze_step` of `step` on the scenario.
    pub(super) fn analyze(&mut self, step: &StepBatch) -> Result<ModelAnalysis, Error> {
        let s = &self.scenario;
        analyze_step(
            s.hardware,
            s.model,
            s.config,
            step,
            &s.parallelism,
            &s.corrections,
        )
    }

    /// Analyses grid point `j` of `part` (filling the other part the same analysis gives): `part`'s value
    /// there and the fixed time of the analysis' attention kernels.
    fn sample(&mut self, part: Part, j: usize) -> Result<(f64, f64), Error> {
        let x = grid_point(j) as u32;
        match part {
            Part::Body | Part::PromptAttention => {
                let a = self.analyze(&StepBatch {
                    prefill_seqs: 1,
                    prefill_chunk: x,
                    ..StepBatch::default()
                })?;
                let (rest, attention, fixed) = split(&a);
                self.prefill_overhead_s = Some(fixed);
                self.body.set(j, rest);
                self.prompt_attention.set(j, attention - fixed);
                let value = if part == Part::Body {
                    rest
                } else {
                    attention - fixed
                };
                Ok((value, fixed))
            }
            Part::Rows | Part::Head => {
                let a = self.analyze(&StepBatch {
                    decode_seqs: x,
                    decode_context: 1,
                    ..StepBatch::default()
                })?;
                let (rows, _, fixed) = split(&a);
                let logits = head(&a);
                self.rows.set(j, rows);
                self.head.set(j, logits);
                Ok((if part == Part::Rows { rows } else { logits }, fixed))
            }
            Part::DecodeAttention => {
                let a = self.analyze(&StepBatch {
                    decode_seqs: 1,
                    decode_context: x,
                    ..StepBatch::default()
                })?;
                let (rest, attention, fixed) = split(&a);
                self.decode_overhead_s = Some(fixed);
                self.rows.set(0, rest);
                self.head.set(0, head(&a));
                self.decode_attention.set(j, attention - fixed);
                Ok((attention - fixed, fixed))
            }
        }
    }

    fn grid(&self, part: Part) -> &Grid {
        match part {
            Part::Body => &self.body,
            Part::PromptAttention => &self.prompt_attention,
            Part::Rows => &self.rows,
            Part::Head => &self.head,
            Part::DecodeAttention => &self.decode_attention,
        }
    }

    fn grid_mut(&mut self, part: Part) -> &mut Grid {
        match part {
            Part::Body => &mut self.body,
            Part::PromptAttention => &mut self.prompt_attention,
            Part::Rows => &mut self.rows,
            Part::Head => &mut self.head,
            Part::DecodeAttention => &mut self.decode_attention,
        }
    }

    fn point(&mut self, part: Part, j: usize) -> Result<f64, Error> {
        match self.grid(part).get(j) {
            Some(v) => Ok(v),
            None => Ok(self.sample(part, j)?.0),
        }
    }

    /// `part` at `x` (at least 1), interpolated linearly between its grid points (every second from
    /// [`COARSE_FROM`] on).
    fn at(&mut self, part: Part, x: f64) -> Result<f64, Error> {
        let x = x.max(1.0);
        if let Some(v) = self.grid(part).cached(x) {
            return Ok(v);
        }
        let (j, t) = grid_cell(x);
        let (j_lo, j_hi) = if j >= COARSE_FROM {
            let j_lo = COARSE_FROM + (j - COARSE_FROM) / 2 * 2;
            (j_lo, j_lo + 2)
        } else {
            (j, j + 1)
        };
        let lo = self.point(part, j_lo)?;
        if t == 0.0 && j_lo == j {
            return Ok(lo);
        }
        let hi = self.point(part, j_hi)?;
        let (x_lo, x_hi) = (grid_point(j_lo), grid_point(j_hi));
        self.grid_mut(part).remember((x_lo, x_hi, lo, hi));
        Ok(lo + (hi - lo) * (x - x_lo) / (x_hi - x_lo))
    }

    /// Everything but attention of a step of `tokens` tokens of which `rows` are decode rows' (their logits
    /// and per-row work included), with `completing` prompts sampling their first token in the same logits
    /// GEMM: B(M) + [R(rows) − B(rows)] + [H(rows + completing) − H(rows)].
    fn rest_s(&mut self, tokens: f64, rows: f64, completing: f64) -> Result<f64, Error> {
        let mut t = if tokens == rows {
            self.at(Part::Rows, rows)?
        } else {
            let body = self.at(Part::Body, tokens)?;
            if rows >= 1.0 {
                body + self.at(Part::Rows, rows)? - self.at(Part::Body, rows)?
            } else {
                body
            }
        };
        if completing >= 1.0 {
            t += self.head_s(rows + completing)? - self.head_s(rows)?;
        }
        Ok(t)
    }

    /// The logits head of `rows` rows alone.
    pub(super) fn head_s(&mut self, rows: f64) -> Result<f64, Error> {
        if rows < 1.0 {
            return Ok(0.0);
        }
        self.at(Part::Head, rows)
    }

    /// Ψ(n), with Ψ(0) = 0.
    fn prompt_attention_s(&mut self, tokens: f64) -> Result<f64, Error> {
        if tokens < 1.0 {
            return Ok(0.0);
        }
        self.at(Part::PromptAttention, tokens)
    }

    /// Attention of one chunk of `tokens` after `prior` cached ones, without the fixed kernel time.
    fn chunk_attention_s(&mut self, tokens: f64, prior: f64) -> Result<f64, Error> {
        let pairs = self.prompt_attention_s(prior + tokens)? - self.prompt_attention_s(prior)?;
        Ok(pairs.max(self.at(Part::DecodeAttention, prior + tokens)?))
    }

    /// Attention of `rows` decode rows of `width` query tokens each over a mean `context`, fixed kernel
    /// time included.
    fn decode_attention_total_s(&mut self, rows: u32, context: f64, width: u32) -> Result<f64, Error> {
        if rows == 0 {
            return Ok(0.0);
        }
        let per_row = if width <= 1 {
            self.at(Part::DecodeAttention, context)?
        } else {
            self.chunk_attention_s(f64::from(width), context)?
        };
        Ok(self.decode_overhead()? + f64::from(rows) * per_row)
    }

    fn decode_overhead(&mut self) -> Result<f64, Error> {
        match self.decode_overhead_s {
            Some(v) => Ok(v),
            None => Ok(self.sample(Part::DecodeAttention, 0)?.1),
        }
    }

    fn prefill_overhead(&mut self) -> Result<f64, Error> {
        match self.prefill_overhead_s {
            Some(v) => Ok(v),
            None => Ok(self.sample(Part::Body, 0)?.1),
        }
    }

    /// The time of a step, in seconds.
    pub(super) fn step_s(&mut self, load: &StepLoad<'_>) -> Result<f64, Error> {
        let decode_tokens = f64::from(load.rows) * f64::from(load.width);
        let prompt_tokens: f64 = load.chunks.iter().map(|c| f64::from(c.tokens)).sum();
        let mut t = self.rest_s(
            decode_tokens + prompt_tokens,
            decode_tokens,
            f64::from(load.completing),
        )?;
        t += self.decode_attention_total_s(load.rows, load.context, load.width)?;
        if !load.chunks.is_empty() {
            t += self.prefill_overhead()?;
            for c in load.chunks {
                t += self.chunk_attention_s(f64::from(c.tokens), f64::from(c.prior))?;
            }
        }
        Ok(t)
    }

    /// One decoder layer's share of a step of `rows` decode rows at mean `context` plus `prompt_tokens`
    /// prompt tokens (the linear layers, norms and attention divided by the layers), and the logits of
    /// `rows` rows: the step of a one-layer drafter (an MTP module or an EAGLE head).
    pub(super) fn layer_and_head_s(
        &mut self,
        rows: u32,
        context: f64,
        prompt_tokens: f64,
    ) -> Result<f64, Error> {
        let layers = f64::from(self.scenario.model.layers.max(1));
        let tokens = f64::from(rows) + prompt_tokens;
        let body = if tokens >= 1.0 {
            self.at(Part::Body, tokens)?
        } else {
            0.0
        };
        let attention = self.decode_attention_total_s(rows, context, 1)?;
        Ok((body + attention) / layers + self.head_s(f64::from(rows))?)
    }

    /// The roof bounding most of a decode step of `rows` rows at `context`, analysed at the grid points
    /// nearest below both and memoized.
    pub(crate) fn decode_bound(&mut self, rows: u32, context: f64) -> Result<Bound, Error> {
        let key = (grid_cell(f64::from(rows)).0, grid_cell(context).0);
        if let Some(&(_, bound)) = self.bounds.iter().find(|(k, _)| *k == key) {
            return Ok(bound);
        }
        let bound = self
            .analyze(&StepBatch {
                decode_seqs: grid_point(key.0) as u32,
                decode_context: grid_point(key.1) as u32,
                ..StepBatch::default()
            })?
            .bound;
        self.bounds.push((key, bound));
        Ok(bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::{Engine, SchedulerKind};
    use roofline_analysis::corrections::Corrections;
    use roofline_analysis::model::find_model;
    use roofline_analysis::parallel::Parallelism;
    use roofline_analysis::quant_config::find_quant_config;
    use roofline_base::hardware::{Mode, find_hardware_in};

    #[test]
    fn the_grid_is_every_integer_to_16_then_eight_points_an_octave() {
        let points: Vec<f64> = (0..20).map(grid_point).collect();
        assert_eq!(&points[..16], &(1..=16).map(f64::from).collect::<Vec<_>>()[..]);
        // 16 · 2^(1/8) = 17.45 → 17, 2^(2/8) → 19.03 → 19, 2^(3/8) → 20.75 → 21, 2^(4/8) → 22.63 → 23.
        assert_eq!(&points[16..20], &[17.0, 19.0, 21.0, 23.0]);
        assert_eq!(grid_point(15 + 8 * 6), 1024.0);
        for x in [1.0, 2.5, 16.0, 17.0, 18.0, 1000.0, 1024.0, 8191.0, 1e6] {
            let (j, t) = grid_cell(x);
            let (lo, hi) = (grid_point(j), grid_point(j + 1));
            assert!(
                lo <= x && x < hi && (0.0..1.0).contains(&t),
                "{x}: {lo}..{hi} at {t}"
            );
            assert!((lo + t * (hi - lo) - x).abs() < 1e-9);
        }
    }

    /// Steps on the grid are analyse_step's own times: one row or one prompt, decode rows scaled, mixed steps
    /// within a percent (the decomposition is exact; the chunk attention's pair difference is not).
    #[test]
    fn steps_match_analyze_step() {
        for (device, tp, model, config) in [
            ("h100_sxm", 1, "llama-3.1-8b", "bf16"),
            ("h100_sxm", 1, "mixtral-8x7b", "fp8"),
            ("h100_sxm", 1, "gpt-oss-20b", "w4a16-mxfp4"),
            // Gated DeltaNet layers (constant state per sequence) and sparse attention's indexer.
            ("b200", 8, "qwen3-next-80b-a3b", "fp8"),
            ("b200", 8, "deepseek-v3.2", "fp8"),
        ] {
            let hardware = find_hardware_in(device, Mode::Reference).unwrap();
            let parallelism = Parallelism::tensor(tp);
            let model = find_model(model).unwrap();
            let config = find_quant_config(config).unwrap();
            let scenario = Engine::Vllm.preset(hardware, &parallelism).scenario(
                hardware,
                model,
                config,
                parallelism,
                Corrections::REALISTIC,
                SchedulerKind::InFlight,
            );
            let mut cost = StepCost::new(scenario);
            let exact = |step: StepBatch| {
                analyze_step(
                    hardware,
                    model,
                    config,
                    &step,
                    &parallelism,
                    &Corrections::REALISTIC,
                )
                .unwrap()
                .total_time_s
            };
            let cases = [
                (1, 1024.0, vec![], 0),
                (64, 2048.0, vec![], 0),
                (
                    0,
                    0.0,
                    vec![Chunk {
                        tokens: 1024,
                        prior: 0,
                    }],
                    1,
                ),
                (
                    32,
                    1536.0,
                    vec![Chunk {
                        tokens: 512,
                        prior: 512,
                    }],
                    1,
                ),
                (
                    128,
                    1200.0,
                    vec![Chunk {
                        tokens: 2048,
                        prior: 0,
                    }],
                    1,
                ),
            ];
            for (rows, context, chunks, completing) in cases {
                let load = StepLoad {
                    rows,
                    context,
                    width: 1,
                    chunks: &chunks,
                    completing,
                };
                let ours = cost.step_s(&load).unwrap();
                let theirs = exact(StepBatch {
                    decode_seqs: rows,
                    decode_context: context as u32,
                    prefill_seqs: chunks.len() as u32,
                    prefill_chunk: chunks.first().map_or(0, |c| c.tokens),
                    prefill_prior: chunks.first().map_or(0, |c| c.prior),
                    prefill_completing: completing,
                });
                assert!(
                    (ours / theirs - 1.0).abs() < 0.01,
                    "{} {rows} rows at {context}, chunks {chunks:?}: {ours} vs analyze_step {theirs}",
                    model.key
                );
            }
        }
    }

    #[test]
    fn the_head_read_off_a_decode_step_is_what_sampling_adds() {
        use roofline_analysis::quant_config::{LinearFormat, Module, ModuleFormat, QuantConfig};
        use roofline_base::precision::{ActivationScale, Precision};
        // A quantized head (its input quantized per token) on two GPUs (its logits gathered).
        let fp8 = LinearFormat {
            weights: Precision::Fp8E4M3,
            activations: Precision::Fp8E4M3,
            activation_scale: ActivationScale::DynamicPerToken,
        };
        let head = ModuleFormat {
            module: Module::Head,
            format: fp8,
        };
        let config = QuantConfig::checkpoint("fp8, head included", fp8, None, vec![head]);
        let hardware = find_hardware_in("h100_sxm", Mode::Reference).unwrap();
        let parallelism = Parallelism::tensor(2);
        let model = find_model("llama-3.1-8b").unwrap();
        let scenario = Engine::Vllm.preset(hardware, &parallelism).scenario(
            hardware,
            model,
            &config,
            parallelism,
            Corrections::REALISTIC,
            SchedulerKind::InFlight,
        );
        let mut cost = StepCost::new(scenario);
        for n in [1, 7, 64, 1024] {
            let prompts = StepBatch {
                prefill_seqs: n,
                prefill_chunk: 1,
                ..StepBatch::default()
            };
            let sampling = cost
                .analyze(&StepBatch {
                    prefill_completing: n,
                    ..prompts
                })
                .unwrap();
            let silent = cost.analyze(&prompts).unwrap();
            assert!(sampling.ops.iter().any(|o| o.name.ends_with("_head_in")));
            let difference = sampling.total_time_s - silent.total_time_s;
            let ours = cost.head_s(f64::from(n)).unwrap();
            assert!(
                (ours / difference - 1.0).abs() < 1e-9,
                "{n} rows: {ours} vs {difference}"
            );
        }
    }
}
