//! Operator FLOP and byte models. Every byte count is exact for the given precisions (block scales included).
//!
//! Each tensor is read or written once (ideal on-chip reuse); FLOPs count a multiply-add as 2.
//! Matrix operators ([`Operator::gemv`], [`Operator::gemm`], [`Operator::batched_gemm`], attention, MoE
//! experts) run on the matrix units; elementwise operators, lookups and KV-cache copies run on the vector
//! units (see [`OpKind::uses_matrix_units`]).

mod attention;
mod attention_shape;
mod elementwise;
mod indexer;
mod kernel;
mod linear_attention;
mod linear_attention_shape;
mod moe;

pub use attention_shape::AttentionShape;
pub use elementwise::{Activation, Norm};
pub use kernel::{AttentionPart, KernelShape, RowKind};
pub use linear_attention::DELTA_RULE_CHUNK;
pub use linear_attention_shape::LinearAttentionShape;
pub use moe::MoeShape;

use std::fmt;
use std::str::FromStr;

use roofline_base::Error;
use roofline_base::hardware::Collective;
use roofline_base::precision::{Architecture, ComputePath, GemmFamily, Precision, QuantizeKernel};

/// The largest dimension accepted for one operator axis (2^24), so products stay exact in `f64`.
pub const MAX_DIM: u64 = 1 << 24;

/// What kind of operator this is; decides how it is drawn and grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum OpKind {
    /// Matrix-vector product (M = 1).
    Gemv,
    /// Matrix-matrix product.
    Gemm,
    /// Several independent matrix-matrix products (MoE experts, per-head products).
    BatchedGemm,
    /// Attention: QKᵀ, softmax and P·V (fused), or one of them (unfused).
    Attention,
    /// Elementwise or row-wise vector work: norms, activations, residual adds, RoPE, softmax.
    Elementwise,
    /// Embedding-table lookup (a gather, no FLOPs).
    Embedding,
    /// KV-cache read or write (data movement, no FLOPs).
    KvCache,
    /// Communication between GPUs over the scale-up link (all-reduce, all-gather, all-to-all, send/receive):
    /// no FLOPs, its bytes are link bytes and its time comes from the interconnect, not the DRAM roof.
    Collective,
}

impl OpKind {
    /// Whether the operator runs on the matrix (tensor) units at the compute path's peak; otherwise it runs
    /// on the vector units ([`roofline_base::hardware::HardwareSpec::vector_flop_per_s`]).
    #[must_use]
    pub const fn uses_matrix_units(self) -> bool {
        matches!(
            self,
            OpKind::Gemv | OpKind::Gemm | OpKind::BatchedGemm | OpKind::Attention
        )
    }

    /// `gemv`, `gemm`, `batched_gemm`, `attention`, `elementwise`, `embedding`, `kv_cache` or `collective`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            OpKind::Gemv => "gemv",
            OpKind::Gemm => "gemm",
            OpKind::BatchedGemm => "batched_gemm",
            OpKind::Attention => "attention",
            OpKind::Elementwise => "elementwise",
            OpKind::Embedding => "embedding",
            OpKind::KvCache => "kv_cache",
            OpKind::Collective => "collective",
        }
    }
}

/// The matrix dimensions of a (batched) GEMM: `batch` independent products `C[M,N] = A[M,K] · B[K,N]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GemmShape {
    /// Independent products (1 for a plain GEMM).
    pub batch: u64,
    /// Rows of A and C (tokens).
    pub m: u64,
    /// Columns of B and C (output features).
    pub n: u64,
    /// Reduction dimension (input features).
    pub k: u64,
}

impl GemmShape {
    /// One product (`batch` 1) of `m` × `k` by `k` × `n`, as [`GemmShape::from_str`] reads `MxNxK`.
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::GemmShape;
    /// assert_eq!(GemmShape::matmul(1, 4096, 2048), "1x4096x2048".parse().unwrap());
    /// ```
    #[must_use]
    pub const fn matmul(m: u64, n: u64, k: u64) -> GemmShape {
        GemmShape { batch: 1, m, n, k }
    }
}

impl FromStr for GemmShape {
    type Err = Error;

    /// Parses one GEMM shape `MxNxK` (batch 1): three sizes of at least 1, separated by `x`, `X` or `×`
    /// (spaces around them allowed). The one shape grammar of the page, the command lines and stored points.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the shape and what is wrong with it.
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::GemmShape;
    /// assert_eq!("1×4096X4096".parse::<GemmShape>().unwrap(), GemmShape { batch: 1, m: 1, n: 4096, k: 4096 });
    /// assert!("1x0x4".parse::<GemmShape>().unwrap_err().to_string().contains("at least 1"));
    /// ```
    fn from_str(shape: &str) -> Result<GemmShape, Error> {
        let invalid = |why: String| Error::InvalidInput(format!("shape '{}' {why}", shape.trim()));
        let parts: Vec<&str> = shape.trim().split(['x', 'X', '×']).collect();
        let [m, n, k] = parts.as_slice() else {
            return Err(invalid("must be MxNxK, e.g. 1x4096x4096".into()));
        };
        let dim = |v: &str| match v.trim().parse::<u64>() {
            Ok(0) => Err(invalid("has a size of 0; every size must be at least 1".into())),
            Ok(d) => Ok(d),
            Err(e) => Err(invalid(format!("has '{}', which is not a size ({e})", v.trim()))),
        };
        Ok(GemmShape {
            batch: 1,
            m: dim(m)?,
            n: dim(n)?,
            k: dim(k)?,
        })
    }
}

impl fmt::Display for GemmShape {
    /// `MxNxK`, what [`GemmShape::from_str`] reads; a batched shape is prefixed with its batch (`BxMxNxK`, as
    /// [`Operator::batched_gemm`] labels it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.batch != 1 {
            write!(f, "{}x", self.batch)?;
        }
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// The precisions of an operator's tensors.
///
/// For attention, `weight` is the KV-cache precision and `activation` the attention compute precision.
/// The matrix unit runs on the activation precision: a weight-only format (W4A16) is dequantized to the
/// activation format before the multiply, and W8A8 / W4A4 run on their shared narrow path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OperandPrecisions {
    /// Weights (the `W` / `B` operand).
    pub weight: Precision,
    /// Activations (the `x` / `A` operand); also the compute path.
    pub activation: Precision,
    /// Output (`y` / `C`).
    pub output: Precision,
}

impl OperandPrecisions {
    /// W4A16 INT4: INT4 weights with an FP16 scale per 128 (4.125 bits a weight), FP16 activations and
    /// output. The weight-only GEMM a plain INT4 matmul runs as where the matrix units take no INT4
    /// ([`OperandPrecisions::run_on`]): the weights are dequantized to FP16 in registers and the multiply
    /// runs on the FP16 path, as in gpu-endpoint's `W4A16-dequant` GEMV and AWQ/GPTQ kernels.
    pub const W4A16_INT4: OperandPrecisions = OperandPrecisions {
        weight: Precision::Int4G128,
        activation: Precision::Fp16,
        output: Precision::Fp16,
    };

    /// The precision the matrix unit runs on.
    #[must_use]
    pub const fn compute(&self) -> Precision {
        self.activation
    }

    /// Whether the weights are narrower than the activations: a weight-only (mixed-input) kernel.
    #[must_use]
    pub const fn is_weight_only(&self) -> bool {
        matches!(
            GemmFamily::of(self.weight, self.activation),
            GemmFamily::WeightOnly
        )
    }

    /// The operands a matmul asked for in `precision` runs with on `arch`: plain INT4 on an architecture
    /// whose matrix units take no INT4 (Hopper, Blackwell) but FP16 is [`OperandPrecisions::W4A16_INT4`],
    /// the weight-only kernel gpu-endpoint measures for it; anything else is `precision` on both operands
    /// (a format the device lacks is then refused by the prediction, naming the architecture).
    ///
    /// # Examples
    /// ```
    /// use roofline_base::{Architecture, Precision};
    /// use roofline_analysis::OperandPrecisions;
    /// let int4 = OperandPrecisions::run_on(Precision::Int4, Architecture::Hopper);
    /// assert_eq!(int4, OperandPrecisions::W4A16_INT4);
    /// assert!(int4.is_weight_only());
    /// // Ampere's tensor cores take INT4 operands.
    /// let ampere = OperandPrecisions::run_on(Precision::Int4, Architecture::Ampere);
    /// assert_eq!(ampere, OperandPrecisions::from(Precision::Int4));
    /// ```
    #[must_use]
    pub fn run_on(precision: Precision, arch: Architecture) -> OperandPrecisions {
        if matches!(precision, Precision::Int4)
            && !arch.runs_path(ComputePath::Int4)
            && arch.runs_path(ComputePath::Fp16)
        {
            OperandPrecisions::W4A16_INT4
        } else {
            OperandPrecisions::from(precision)
        }
    }

    /// `W4A16`: the weight and activation element widths, for labels of weight-only kernels.
    #[must_use]
    pub fn width_label(&self) -> String {
        format!(
            "W{}A{}",
            self.weight.element_bits(),
            self.activation.element_bits()
        )
    }
}

impl From<Precision> for OperandPrecisions {
    /// Weights and activations in `p`, output in `p.default_output()` (FP16 for narrow formats).
    fn from(p: Precision) -> Self {
        OperandPrecisions {
            weight: p,
            activation: p,
            output: p.default_output(),
        }
    }
}

/// One operator: the FLOPs it performs and the DRAM bytes it moves, split by tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Display name, e.g. `GEMM 2048x4096x4096`.
    pub name: String,
    /// Kind.
    pub kind: OpKind,
    /// Shape as `MxNxK`.
    pub shape: String,
    /// Precisions of the tensors.
    pub precisions: OperandPrecisions,
    /// Floating-point (or integer) operations, in FLOP.
    pub flops: f64,
    /// Bytes of weights read.
    pub weight_bytes: f64,
    /// Bytes of activations read (for attention: Q and any materialized scores).
    pub activation_bytes: f64,
    /// Bytes of KV cache read or written.
    pub kv_bytes: f64,
    /// Bytes of output written.
    pub output_bytes: f64,
    /// Matrix dimensions, for GEMM-like operators (used by wave quantization).
    pub gemm: Option<GemmShape>,
    /// The collective, for communication operators ([`OpKind::Collective`]).
    pub collective: Option<CollectiveShape>,
    /// Which activation-quantization kernel this is, for the kernels that quantize a linear layer's input
    /// ([`Operator::activation_quantization`]); its fixed time is the spec's figure for that kernel.
    pub quantize: Option<QuantizeKernel>,
    /// What the kernel computes, for the operators that are not GEMM-like (norms, activations, residual
    /// adds, RoPE, quantization, embeddings, KV-cache copies, attention): enough to build and run it.
    pub kernel: Option<KernelShape>,
}

/// What a communication operator moves: which collective, over how many GPUs, of how large a tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CollectiveShape {
    /// The collective.
    pub collective: Collective,
    /// GPUs taking part (at least 2).
    pub gpus: u32,
    /// The tensor it runs on (the full result of an all-reduce or all-gather, one GPU's rows of an
    /// all-to-all, the sent tensor of a send/receive), in bytes.
    pub payload_bytes: f64,
}

pub(crate) fn check_dims(dims: &[(&str, u64)]) -> Result<(), Error> {
    for &(name, v) in dims {
        if v == 0 || v > MAX_DIM {
            return Err(Error::InvalidInput(format!(
                "{name} must be between 1 and {MAX_DIM}, got {v}"
            )));
        }
    }
    Ok(())
}

impl Operator {
    /// GEMV `y[N] = W[N,K] · x[K]`.
    ///
    /// FLOPs = 2·N·K. Bytes = W (N·K at the weight precision) + x (K at the activation precision) +
    /// y (N at the output precision).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when N or K is 0 or above [`MAX_DIM`].
    ///
    /// # Examples
    /// ```
    /// use roofline_analysis::{predict, Operator};
    /// use roofline_base::{find_hardware, Precision};
    /// let gb10 = find_hardware("gb10").unwrap();
    /// // y[4096] = W[4096, 4096] · x[4096] in FP16 moves 2·4096² + 2·4096 + 2·4096 bytes.
    /// let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
    /// let p = predict(gb10, &op).unwrap();
    /// assert_eq!(p.bytes, 33_570_816.0);
    /// assert!((p.time_s - 33_570_816.0 / 273e9).abs() < 1e-12);
    /// ```
    pub fn gemv(n: u64, k: u64, precisions: OperandPrecisions) -> Result<Operator, Error> {
        check_dims(&[("N", n), ("K", k)])?;
        let (n_f, k_f) = (n as f64, k as f64);
        Ok(Operator {
            name: format!("GEMV 1x{n}x{k}"),
            kind: OpKind::Gemv,
            shape: format!("1x{n}x{k}"),
            precisions,
            flops: 2.0 * n_f * k_f,
            weight_bytes: precisions.weight.tensor_bytes(n_f * k_f),
            activation_bytes: precisions.activation.tensor_bytes(k_f),
            kv_bytes: 0.0,
            output_bytes: precisions.output.tensor_bytes(n_f),
            gemm: Some(GemmShape { batch: 1, m: 1, n, k }),
            collective: None,
            quantize: None,
            kernel: None,
        })
    }

    /// GEMM `C[M,N] = A[M,K] · B[K,N]`, with A the activations and B the weights.
    ///
    /// FLOPs = 2·M·N·K. Bytes = A (M·K, activation precision) + B (K·N, weight precision) +
    /// C (M·N, output precision); each tensor is read or written once (ideal on-chip reuse).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when M, N or K is 0 or above [`MAX_DIM`].
    pub fn gemm(m: u64, n: u64, k: u64, precisions: OperandPrecisions) -> Result<Operator, Error> {
        let mut op = Operator::batched_gemm(1, m, n, k, precisions)?;
        op.name = format!("GEMM {m}x{n}x{k}");
        op.kind = OpKind::Gemm;
        op.shape = format!("{m}x{n}x{k}");
        Ok(op)
    }

    /// Batched GEMM: `batch` independent products `C_i[M,N] = A_i[M,K] · B_i[K,N]`, each with its own weights
    /// (MoE experts with M tokens each, per-head products).
    ///
    /// FLOPs = 2·batch·M·N·K. Bytes = batch · (A + B + C), each B_i a tensor with its own scales.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when a dimension is 0 or above [`MAX_DIM`].
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::Operator;
    /// // 8 experts, 4 tokens each, 4096 -> 14336 in BF16: 2·8·4·14336·4096 FLOPs.
    /// let op = Operator::batched_gemm(8, 4, 14_336, 4096, Precision::Bf16.into()).unwrap();
    /// assert_eq!(op.flops, 2.0 * 8.0 * 4.0 * 14_336.0 * 4096.0);
    /// assert_eq!(op.weight_bytes, 8.0 * 2.0 * 14_336.0 * 4096.0);
    /// ```
    pub fn batched_gemm(
        batch: u64,
        m: u64,
        n: u64,
        k: u64,
        precisions: OperandPrecisions,
    ) -> Result<Operator, Error> {
        check_dims(&[("batch", batch), ("M", m), ("N", n), ("K", k)])?;
        let (b_f, m_f, n_f, k_f) = (batch as f64, m as f64, n as f64, k as f64);
        Ok(Operator {
            name: format!("Batched GEMM {batch}x({m}x{n}x{k})"),
            kind: OpKind::BatchedGemm,
            shape: format!("{batch}x{m}x{n}x{k}"),
            precisions,
            flops: 2.0 * b_f * m_f * n_f * k_f,
            weight_bytes: b_f * precisions.weight.tensor_bytes(k_f * n_f),
            activation_bytes: b_f * precisions.activation.tensor_bytes(m_f * k_f),
            kv_bytes: 0.0,
            output_bytes: b_f * precisions.output.tensor_bytes(m_f * n_f),
            gemm: Some(GemmShape { batch, m, n, k }),
            collective: None,
            quantize: None,
            kernel: None,
        })
    }

    /// A collective over `gpus` GPUs on a `rows`×`width` tensor in `precision` (see
    /// [`roofline_base::hardware::Interconnect`] for its time).
    ///
    /// FLOPs = 0 (reductions are negligible next to the transfer). Bytes = the bytes each GPU sends over its
    /// link, [`Collective::link_bytes`] of the tensor's bytes (counted as activation bytes); none of them is
    /// DRAM traffic.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero or oversized dimension or fewer than 2 GPUs.
    ///
    /// # Examples
    /// ```
    /// use roofline_base::Precision;
    /// use roofline_analysis::{Operator, OpKind};
    /// use roofline_base::hardware::Collective;
    /// // Llama-3.1-70B decode, one token: 8192 BF16 values = 16,384 B; a ring over 4 GPUs sends 2·3/4 of it.
    /// let op = Operator::collective(Collective::AllReduce, 1, 8192, Precision::Bf16, 4).unwrap();
    /// assert_eq!((op.kind, op.flops, op.bytes()), (OpKind::Collective, 0.0, 24_576.0));
    /// ```
    pub fn collective(
        collective: Collective,
        rows: u64,
        width: u64,
        precision: Precision,
        gpus: u32,
    ) -> Result<Operator, Error> {
        check_dims(&[("rows", rows), ("width", width)])?;
        if gpus < 2 {
            return Err(Error::InvalidInput(format!(
                "a collective needs at least 2 GPUs, got {gpus}"
            )));
        }
        let payload_bytes = precision.tensor_bytes(rows as f64 * width as f64);
        Ok(Operator {
            name: collective.name().to_owned(),
            kind: OpKind::Collective,
            shape: format!("{rows}x{width} over {gpus} GPUs"),
            precisions: OperandPrecisions {
                weight: precision,
                activation: precision,
                output: precision,
            },
            flops: 0.0,
            weight_bytes: 0.0,
            activation_bytes: collective.link_bytes(payload_bytes, gpus),
            kv_bytes: 0.0,
            output_bytes: 0.0,
            gemm: None,
            collective: Some(CollectiveShape {
                collective,
                gpus,
                payload_bytes,
            }),
            quantize: None,
            kernel: None,
        })
    }

    /// GEMV when `m <= 1`, else GEMM — the original toolkit's `/api/analyze` rule.
    ///
    /// # Errors
    /// As [`Operator::gemv`] and [`Operator::gemm`].
    pub fn matmul(m: u64, n: u64, k: u64, precisions: OperandPrecisions) -> Result<Operator, Error> {
        if m <= 1 {
            Operator::gemv(n, k, precisions)
        } else {
            Operator::gemm(m, n, k, precisions)
        }
    }

    /// The GEMM kernel family of a GEMV, GEMM or batched GEMM ([`GemmFamily::of`] its weight and activation
    /// formats); `None` for every other operator.
    #[must_use]
    pub const fn gemm_family(&self) -> Option<GemmFamily> {
        match self.kind {
            OpKind::Gemv | OpKind::Gemm | OpKind::BatchedGemm => {
                Some(GemmFamily::of(self.precisions.weight, self.precisions.activation))
            }
            _ => None,
        }
    }

    /// Total DRAM bytes moved.
    #[must_use]
    pub fn bytes(&self) -> f64 {
        self.weight_bytes + self.activation_bytes + self.kv_bytes + self.output_bytes
    }

    /// Renames the operator (e.g. `q_proj`), keeping its shape; model analysis names operators by role.
    #[must_use]
    pub fn named(mut self, name: &str) -> Operator {
        name.clone_into(&mut self.name);
        self
    }

    /// Arithmetic intensity, in FLOP/byte.
    #[must_use]
    pub fn arithmetic_intensity(&self) -> f64 {
        self.flops / self.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemv_fp16_4096_moves_the_hand_computed_bytes() {
        // 2·4096·4096 (W) + 2·4096 (x) + 2·4096 (y) = 33,554,432 + 8,192 + 8,192 = 33,570,816.
        let op = Operator::gemv(4096, 4096, Precision::Fp16.into()).unwrap();
        assert_eq!(op.bytes(), 33_570_816.0);
        assert_eq!(op.flops, 33_554_432.0);
    }

    #[test]
    fn gemm_fp16_4096_cubed_has_the_textbook_intensity() {
        // 2·4096³ / (3·2·4096²) = 4096/3 = 1365.33 FLOP/byte.
        let op = Operator::gemm(4096, 4096, 4096, Precision::Fp16.into()).unwrap();
        assert!((op.arithmetic_intensity() - 4096.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn weight_only_gemv_charges_each_tensor_at_its_own_precision() {
        // W4A16 NVFP4 weights: 4096·4096·4.5/8 + 4 = 9,437,188 B; x, y FP16: 8,192 B each.
        let p = OperandPrecisions {
            weight: Precision::Nvfp4,
            activation: Precision::Fp16,
            output: Precision::Fp16,
        };
        let op = Operator::gemv(4096, 4096, p).unwrap();
        assert_eq!(op.weight_bytes, 9_437_188.0);
        assert_eq!(op.bytes(), 9_437_188.0 + 16_384.0);
        assert_eq!(op.precisions.compute(), Precision::Fp16);
    }

    #[test]
    fn shapes_parse_strictly_and_print_back() {
        let shape = |m, n, k| GemmShape { batch: 1, m, n, k };
        assert_eq!("64x256x256".parse::<GemmShape>().unwrap(), shape(64, 256, 256));
        assert_eq!(
            " 1 × 4096 X 4096 ".parse::<GemmShape>().unwrap(),
            shape(1, 4096, 4096)
        );
        for (bad, why) in [
            ("1x2", "must be MxNxK"),
            ("1x2x3x4", "must be MxNxK"),
            ("axbxc", "'a', which is not a size"),
            ("1x0x4", "at least 1"),
            ("1x-2x4", "'-2', which is not a size"),
        ] {
            let message = bad.parse::<GemmShape>().unwrap_err().to_string();
            assert!(message.contains(bad) && message.contains(why), "{bad}: {message}");
        }
        assert_eq!(shape(64, 256, 128).to_string(), "64x256x128");
        assert_eq!(
            "64x256x128".parse::<GemmShape>().unwrap().to_string(),
            "64x256x128"
        );
        // The labels operators carry are what the shapes print.
        let gemv = Operator::gemv(4096, 1024, Precision::Fp16.into()).unwrap();
        assert_eq!(gemv.gemm.unwrap().to_string(), gemv.shape);
        let batched = Operator::batched_gemm(8, 4, 16, 32, Precision::Fp16.into()).unwrap();
        assert_eq!(batched.gemm.unwrap().to_string(), batched.shape);
    }

    #[test]
    fn zero_and_huge_dimensions_are_rejected() {
        assert!(Operator::gemm(0, 1, 1, Precision::Fp16.into()).is_err());
        assert!(Operator::gemv(1, MAX_DIM + 1, Precision::Fp16.into()).is_err());
        assert_eq!(
            Operator::matmul(1, 8, 8, Precision::Fp16.into()).unwrap().kind,
            OpKind::Gemv
        );
    }
}
