//! `gpu-endpoint precompress <dir>`: writes the `.br` and `.gz` sibling of every compressible file of the
//! built page (`crate::assets::precompress_dir`), so `serve` never compresses them per request; trunk's
//! post-build hook runs it on every release build (`scripts/precompress.sh`).

use std::path::PathBuf;

use clap::Args;

use super::CliError;
use crate::assets::precompress_dir;

/// `precompress` options.
#[derive(Debug, Clone, Args)]
pub struct PrecompressArgs {
    /// The built page's directory (`dist`, or trunk's staging directory).
    pub dir: PathBuf,
}

/// Runs `precompress`: one line per file with its size raw, brotli and gzip.
///
/// # Errors
/// [`CliError::Runtime`] naming the directory when a file cannot be read, compressed or written.
pub fn run(args: &PrecompressArgs) -> Result<(), CliError> {
    let written = precompress_dir(&args.dir)
        .map_err(|e| CliError::Runtime(format!("precompressing {}: {e}", args.dir.display())))?;
    for f in written {
        let name = f
            .file
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        println!(
            "{name:<44} {:>9} B  br {:>9} B  gz {:>9} B",
            f.bytes, f.brotli_bytes, f.gzip_bytes
        );
    }
    Ok(())
}
