//! The web page's static files as the endpoint serves them: precompressed siblings written once at build
//! time ([`precompress_dir`], `gpu-endpoint precompress dist`, run by trunk's post-build hook), the one a
//! client accepts ([`Encoding::choose`]: brotli, then gzip, else the file itself), and how long a file may be
//! cached ([`cache_control`]: a year and immutable for trunk's content-hashed names, revalidated otherwise).
//! No request compresses anything.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Extensions worth compressing (text and WebAssembly; images other than SVG are compressed already).
const COMPRESSIBLE: [&str; 7] = ["wasm", "js", "css", "html", "svg", "webmanifest", "json"];

/// A precompressed encoding, preferred in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `br`, the `.br` sibling.
    Brotli,
    /// `gzip`, the `.gz` sibling.
    Gzip,
}

impl Encoding {
    /// Both, in order of preference (brotli is about 20 % smaller on the page's wasm).
    pub const ALL: [Encoding; 2] = [Encoding::Brotli, Encoding::Gzip];

    /// The `Content-Encoding` token.
    #[must_use]
    pub const fn token(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// The sibling's extension.
    #[must_use]
    pub const fn extension(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gz",
        }
    }

    /// The sibling of `file` in this encoding (`x.wasm` → `x.wasm.br`).
    #[must_use]
    pub fn sibling(self, file: &Path) -> PathBuf {
        let mut name = file.as_os_str().to_owned();
        name.push(".");
        name.push(self.extension());
        PathBuf::from(name)
    }

    /// Whether an `Accept-Encoding` header value accepts this encoding (listed, or `*`, with a non-zero
    /// `q`).
    #[must_use]
    pub fn accepted_by(self, accept_encoding: &str) -> bool {
        accept_encoding.split(',').any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let token = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (token.eq_ignore_ascii_case(self.token()) || token == "*") && !refused
        })
    }

    /// The preferred encoding of `file` that the client accepts and that has a sibling on disk.
    #[must_use]
    pub fn choose(file: &Path, accept_encoding: &str) -> Option<Encoding> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.accepted_by(accept_encoding) && e.sibling(file).is_file())
    }
}

/// Whether `name` is one of trunk's content-hashed outputs: `<stem>-<16 hex digits>` before the extension
/// (`roofline-web-9ef2d0aa34898f17_bg.wasm`, `style-592d219a14140205.css`), which changes whenever the
/// content does.
#[must_use]
pub fn is_hashed(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("");
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The `Cache-Control` of file `name`: a hashed name never changes (a year, `immutable`: RFC 8246); the
/// rest (index.html, sw.js, the manifest, the icon) is revalidated on every load so a new build is seen.
#[must_use]
pub fn cache_control(name: &str) -> &'static str {
    if is_hashed(name) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

/// One file precompressed: its size and the size of each sibling written, in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precompressed {
    /// The file.
    pub file: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Brotli (quality 11, 16 MiB window) size.
    pub brotli_bytes: u64,
    /// Gzip (level 9) size.
    pub gzip_bytes: u64,
}

/// Writes a `.br` (brotli quality 11) and a `.gz` (gzip level 9) sibling beside every compressible file
/// directly in `dir`, replacing older ones, and returns what it wrote.
///
/// # Errors
/// The first file that cannot be read, compressed or written.
pub fn precompress_dir(dir: &Path) -> std::io::Result<Vec<Precompressed>> {
    let mut written = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    for file in files {
        let compressible = file
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| COMPRESSIBLE.contains(&e));
        if !file.is_file() || !compressible {
            continue;
        }
        let data = std::fs::read(&file)?;
        let brotli = brotli_bytes(&data)?;
        let gzip = gzip_bytes(&data)?;
        std::fs::write(Encoding::Brotli.sibling(&file), &brotli)?;
        std::fs::write(Encoding::Gzip.sibling(&file), &gzip)?;
        written.push(Precompressed {
            file,
            bytes: data.len() as u64,
            brotli_bytes: brotli.len() as u64,
            gzip_bytes: gzip.len() as u64,
        });
    }
    Ok(written)
}

/// `data` brotli-compressed at quality 11 with a 16 MiB window (lgwin 24), the encoder's best.
fn brotli_bytes(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 24,
        ..brotli::enc::BrotliEncoderParams::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params)?;
    Ok(out)
}

/// `data` gzip-compressed at level 9.
fn gzip_bytes(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_get_the_best_encoding_they_accept() {
        let br = |h: &str| Encoding::Brotli.accepted_by(h);
        assert!(br("gzip, deflate, br, zstd"));
        assert!(br("*"));
        assert!(!br("gzip, deflate"));
        assert!(!br("br;q=0, gzip"));
        assert!(Encoding::Gzip.accepted_by("br;q=0, gzip;q=0.8"));
        assert!(!Encoding::Gzip.accepted_by(""));
    }

    #[test]
    fn hashed_names_are_immutable_and_the_rest_revalidated() {
        for hashed in [
            "roofline-web-9ef2d0aa34898f17_bg.wasm",
            "roofline-web-9ef2d0aa34898f17.js",
            "style-592d219a14140205.css",
        ] {
            assert_eq!(
                cache_control(hashed),
                "public, max-age=31536000, immutable",
                "{hashed}"
            );
        }
        for plain in [
            "index.html",
            "sw.js",
            "manifest.webmanifest",
            "icon.svg",
            "style-1234.css",
        ] {
            assert_eq!(cache_control(plain), "no-cache", "{plain}");
        }
    }

    #[test]
    fn siblings_decompress_to_the_file_and_only_compressible_files_get_them() {
        let dir = tempfile::tempdir().unwrap();
        let text = "roofline ".repeat(2000);
        std::fs::write(dir.path().join("a.js"), &text).unwrap();
        std::fs::write(dir.path().join("b.png"), [0u8; 64]).unwrap();
        let written = precompress_dir(dir.path()).unwrap();
        assert_eq!(written.len(), 1);
        let js = &written[0];
        // 18,000 bytes of one repeated word compress to a tiny fraction.
        assert!(
            js.bytes == 18_000 && js.brotli_bytes < 200 && js.gzip_bytes < 400,
            "{js:?}"
        );
        let mut decoded = Vec::new();
        let br = std::fs::read(dir.path().join("a.js.br")).unwrap();
        brotli::BrotliDecompress(&mut &br[..], &mut decoded).unwrap();
        assert_eq!(decoded, text.as_bytes());
        let gz = std::fs::read(dir.path().join("a.js.gz")).unwrap();
        let mut decoded = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut decoded).unwrap();
        assert_eq!(decoded, text);
        assert!(!dir.path().join("b.png.br").exists());
        assert_eq!(
            Encoding::choose(&dir.path().join("a.js"), "gzip, br"),
            Some(Encoding::Brotli)
        );
        assert_eq!(Encoding::choose(&dir.path().join("b.png"), "gzip, br"), None);
    }
}
