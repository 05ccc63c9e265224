//! A/B candidates: another build of the recorded kernel, run on the recorded input at the
//! recorded addresses beside the recorded one. A candidate is a compiled image (cubin, fatbin,
//! PTX) or CUDA C++ source compiled here with NVRTC for the GPU at hand, with `-D` defines and
//! extra compiler options. What can be checked without a GPU ([`CandidateSpec::preflight`]) is
//! checked before any GPU work, by `replay` and by the explorer alike.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rr_format::image::{self, ImageKind};
use rr_format::text::{visible, visible_path};

use crate::error::{Error, Result};

/// A CUDA C++ source file is at most this large (a generated kernel of a few MiB is plenty).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;
/// At most this many defines and compiler options.
pub const MAX_OPTIONS: usize = 256;

/// File name endings taken as CUDA C++ source.
const SOURCE_ENDINGS: &[&str] = &["cu", "cuh", "cpp", "cc", "cxx", "h", "hpp"];

/// Whether `path` is named as CUDA C++ source (`*.cu`, `*.cuh`, `*.cpp`, `*.cc`, `*.cxx`,
/// `*.h`, `*.hpp`): what is compiled rather than loaded.
pub fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_ENDINGS.contains(&e.to_ascii_lowercase().as_str()))
}

/// A preprocessor definition, `NAME` or `NAME=VALUE` (`-DNAME=VALUE`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Define {
    pub name: String,
    pub value: Option<String>,
}

impl Define {
    /// `NAME` or `NAME=VALUE`, as [`Define::parse`] reads it.
    pub fn spec(&self) -> String {
        match &self.value {
            Some(val) => format!("{}={val}", self.name),
            None => self.name.clone(),
        }
    }

    /// `NAME` or `NAME=VALUE`: NAME a C identifier, VALUE free of control characters (one
    /// compiler option each).
    pub fn parse(s: &str) -> std::result::Result<Define, String> {
        let (name, value) = match s.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (s, None),
        };
        check_identifier(name).map_err(|why| format!("{}: {why}", visible(s)))?;
        if let Some(v) = value {
            if v.chars().any(char::is_control) {
                return Err(format!(
                    "{}: the value holds control characters",
                    visible(s)
                ));
            }
        }
        Ok(Define {
            name: name.to_string(),
            value: value.map(str::to_string),
        })
    }

    /// The compiler option (`-DNAME=VALUE`).
    pub fn option(&self) -> String {
        match &self.value {
            Some(v) => format!("-D{}={v}", self.name),
            None => format!("-D{}", self.name),
        }
    }
}

/// A C identifier: what a macro name may be.
pub fn check_identifier(name: &str) -> std::result::Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(
            "a macro name is a C identifier (letters, digits, _; not a digit first)".into(),
        );
    }
    Ok(())
}

/// What the user names as the candidate.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidateSpec {
    #[serde(with = "super::pathjson")]
    pub path: PathBuf,
    /// The kernel to run (default: the recorded kernel's name).
    pub kernel: Option<String>,
    pub defines: Vec<Define>,
    /// Further NVRTC options (`--use_fast_math`, `-maxrregcount=64`, …).
    pub options: Vec<String>,
}

/// What a candidate file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum CandidateFile {
    Image(Vec<u8>, ImageKind),
    Source(String),
}

/// A candidate ready to load: its image and the kernel to bind.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub image: Vec<u8>,
    /// The image's kind in words ("CUDA ELF cubin, sm_90", "compiled from k.cu with NVRTC …").
    pub kind: String,
    pub kernel: String,
    /// Seconds NVRTC took (sources only).
    pub compile_seconds: Option<f64>,
    /// The compiler's warnings.
    pub log: String,
}

impl CandidateSpec {
    /// Read and classify the file, and check what needs no GPU: a regular file within the
    /// limits, an image the loader knows or a source, defines and options only for sources.
    pub fn preflight(&self) -> Result<CandidateFile> {
        if self.defines.len() + self.options.len() > MAX_OPTIONS {
            return Err(Error::invalid(format!(
                "at most {MAX_OPTIONS} defines and compiler options"
            )));
        }
        for (i, d) in self.defines.iter().enumerate() {
            if self.defines[..i].iter().any(|e| e.name == d.name) {
                return Err(Error::invalid(format!("-D {} is given twice", d.name)));
            }
            if d.value.as_deref().is_some_and(|v| v.contains("..")) {
                return Err(Error::invalid(format!(
                    "-D {}={}: a candidate is one variant; `tune --source … -D {}=…` sweeps several",
                    d.name,
                    visible(d.value.as_deref().unwrap_or_default()),
                    d.name
                )));
            }
        }
        for o in &self.options {
            if o.is_empty() || o.chars().any(char::is_control) {
                return Err(Error::invalid(format!(
                    "--nvrtc-opt {}: an option is non-empty text without control characters",
                    rr_format::text::quoted(o)
                )));
            }
        }
        if let Some(k) = &self.kernel {
            if k.is_empty() || k.chars().any(char::is_control) {
                return Err(Error::invalid(format!(
                    "{} is not a kernel name",
                    rr_format::text::quoted(k)
                )));
            }
        }
        if is_source(&self.path) {
            let bytes =
                rr_format::fsio::read_limited(&self.path, MAX_SOURCE_BYTES, "CUDA C++ source")?;
            let text = String::from_utf8(bytes)
                .map_err(|_| Error::format(&self.path, "a CUDA C++ source is UTF-8 text"))?;
            if text.contains('\0') {
                return Err(Error::format(
                    &self.path,
                    "a CUDA C++ source holds no NUL bytes",
                ));
            }
            return Ok(CandidateFile::Source(text));
        }
        let (bytes, info) = image::read(&self.path).map_err(|e| {
            Error::invalid(format!(
                "{e} (a candidate is a cubin, fatbin or PTX file, or CUDA C++ source named *.cu)"
            ))
        })?;
        if !self.defines.is_empty() || !self.options.is_empty() {
            return Err(Error::invalid(format!(
                "--define and --nvrtc-opt apply to CUDA C++ sources; {} is already compiled ({})",
                visible_path(&self.path),
                info.kind.describe()
            )));
        }
        Ok(CandidateFile::Image(bytes, info.kind))
    }

    /// The candidate for a GPU of architecture `sm` (sources compiled for it), its kernel named
    /// as `recorded` unless told otherwise, and present in the image where that can be seen.
    pub fn prepare(&self, file: CandidateFile, recorded: &str, sm: u32) -> Result<Candidate> {
        let kernel = self.kernel.clone().unwrap_or_else(|| recorded.to_string());
        let (image, kind, compile_seconds, log) = match file {
            CandidateFile::Image(bytes, kind) => (bytes, kind.describe(), None, String::new()),
            CandidateFile::Source(text) => {
                let t = Instant::now();
                let c = compile(&self.path, &text, &self.compile_options(sm))?;
                let seconds = t.elapsed().as_secs_f64();
                let kind = format!(
                    "compiled from {} with NVRTC for sm_{sm}{}",
                    visible_path(&self.path),
                    if c.cubin { "" } else { " (PTX)" }
                );
                (c.image, kind, Some(seconds), c.log)
            }
        };
        check_image(
            &image,
            &self.path,
            "the candidate",
            &kernel,
            sm,
            "--candidate-kernel",
        )?;
        Ok(Candidate {
            image,
            kind,
            kernel,
            compile_seconds,
            log,
        })
    }

    /// For a compiled candidate (`file` as [`CandidateSpec::preflight`] read it), that it holds
    /// the kernel it runs under for each of the `recorded` kernels (`--candidate-kernel`'s, else
    /// the recorded name), where that can be seen without a GPU: refused before any GPU work
    /// rather than found out instance by instance. A source (compiled per GPU) or a fatbin is
    /// checked when [`CandidateSpec::prepare`]d.
    pub fn check_kernels<'a>(
        &self,
        file: &CandidateFile,
        recorded: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let CandidateFile::Image(bytes, _) = file else {
            return Ok(());
        };
        let info = image::identify(bytes, &self.path)?;
        for name in recorded {
            let kernel = self.kernel.as_deref().unwrap_or(name);
            check_kernel_name(
                &info,
                &self.path,
                "the candidate",
                kernel,
                "name another with --candidate-kernel",
            )?;
        }
        Ok(())
    }

    /// NVRTC's options for architecture `sm`: the architecture, the source's own directory and
    /// the CUDA installation's headers on the include path, the defines, then the user's.
    pub fn compile_options(&self, sm: u32) -> Vec<String> {
        let mut o = vec![format!("-arch=sm_{sm}")];
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            o.push(format!("-I{}", dir.display()));
        }
        if let Some(inc) = rr_cuda::nvrtc::cuda_include_dir() {
            o.push(format!("-I{}", inc.display()));
        }
        o.extend(self.defines.iter().map(Define::option));
        o.extend(self.options.iter().cloned());
        o
    }
}

/// Whether a compiled `image` (`what`, of `path`) can run on architecture `sm` and holds
/// `kernel`, where that can be seen; `flag` names the option that picks another kernel.
pub fn check_image(
    image: &[u8],
    path: &Path,
    what: &str,
    kernel: &str,
    sm: u32,
    flag: &str,
) -> Result<()> {
    let info = image::identify(image, path)?;
    if let ImageKind::Cubin { sm: image_sm, .. } = info.kind {
        if !image::sm_compatible(image_sm, sm) {
            return Err(Error::format(
                path,
                format!("{what} is a cubin for sm_{image_sm}; this GPU is sm_{sm}"),
            ));
        }
    }
    check_kernel_name(
        &info,
        path,
        what,
        kernel,
        &format!("name another with {flag}"),
    )
}

/// Whether image `info` (`what`, of `path`) holds `kernel` where that can be seen without a
/// GPU (a cubin's symbols, a PTX text's `.entry` lines; not a fatbin's); `remedy` says what
/// to do instead (`name another with --candidate-kernel`). Names are cut to a few hundred characters: a record's
/// kernel name of MB must not make the one-line error as long.
pub fn check_kernel_name(
    info: &image::ImageInfo,
    path: &Path,
    what: &str,
    kernel: &str,
    remedy: &str,
) -> Result<()> {
    if info.has_kernel(kernel) != Some(false) {
        return Ok(());
    }
    let mut names: Vec<String> = info.kernels.iter().take(20).map(|k| short(k)).collect();
    if info.kernels.len() > names.len() {
        names.push(format!("and {} more", info.kernels.len() - names.len()));
    }
    Err(Error::format(
        path,
        format!(
            "{what} has no kernel {} (it has: {}); {remedy}",
            short(kernel),
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        ),
    ))
}

/// A kernel name made visible for a message, cut to 300 characters (saying how long it is).
fn short(name: &str) -> String {
    rr_format::text::cut_visible(name, 300, true).into_owned()
}

/// Compile `text` (read from `path`) with NVRTC; a rejected source is an error naming the file
/// with the compiler's log.
pub fn compile(path: &Path, text: &str, options: &[String]) -> Result<rr_cuda::nvrtc::Compiled> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "candidate.cu".into());
    rr_cuda::nvrtc::compile(text, &name, options).map_err(|e| match e {
        rr_cuda::nvrtc::CompileError::Unavailable(m) => Error::Failed(m),
        rr_cuda::nvrtc::CompileError::Rejected { log } => Error::format(path, first_error(&log)),
        other => Error::format(path, other.to_string()),
    })
}

/// NVRTC's version, loading it (or why it cannot be).
pub fn nvrtc_version() -> std::result::Result<(i32, i32), String> {
    rr_cuda::nvrtc::load().map_err(|e| e.to_string())
}

/// One line for a rejected source: the compiler's first error and how many more there are.
pub fn first_error(log: &str) -> String {
    // `file(line): error: …` (or `catastrophic error:`); not the source lines echoed under
    // them, nor the closing count.
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("error:")).collect();
    match errors.split_first() {
        None => format!(
            "does not compile: {}",
            log.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no compiler log")
        ),
        Some((first, [])) => format!("does not compile: {}", first.trim()),
        Some((first, rest)) => format!(
            "does not compile: {} (and {} more error(s))",
            first.trim(),
            rest.len()
        ),
    }
}

/// A compiler log made safe to print: control characters visible except line breaks, at most
/// 40 lines.
pub fn visible_log(log: &str) -> String {
    const LINES: usize = 40;
    let lines: Vec<String> = log.lines().map(|l| visible(l).into_owned()).collect();
    let mut out = lines
        .iter()
        .take(LINES)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > LINES {
        out.push_str(&format!("\n… {} more line(s)", lines.len() - LINES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_are_identifiers_with_plain_values() {
        let d = Define::parse("TILE=16").unwrap();
        assert_eq!(d.option(), "-DTILE=16");
        assert_eq!(Define::parse("FAST").unwrap().option(), "-DFAST");
        assert_eq!(Define::parse("X=").unwrap().option(), "-DX=");
        for bad in [
            "",
            "1TILE=2",
            "TI LE=3",
            "A-B",
            "=4",
            "X=a\nb",
            "X=\u{1b}[2J",
        ] {
            assert!(Define::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Define::parse("X=a\nb").unwrap_err().contains("\\n"));
    }

    #[test]
    fn preflight_classifies_and_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("k.cu");
        std::fs::write(&src, "__global__ void k() {}").unwrap();
        let spec = CandidateSpec {
            path: src.clone(),
            defines: vec![Define::parse("TILE=8").unwrap()],
            ..Default::default()
        };
        assert!(matches!(
            spec.preflight().unwrap(),
            CandidateFile::Source(_)
        ));
        let opts = spec.compile_options(90);
        assert_eq!(opts[0], "-arch=sm_90");
        assert!(opts.contains(&"-DTILE=8".to_string()));
        assert!(opts.contains(&format!("-I{}", dir.path().display())));

        // Defines on an image, garbage, NUL in a source, a directory.
        let ptx = dir.path().join("k.ptx");
        std::fs::write(&ptx, ".version 8.0\n.target sm_90\n.address_size 64\n").unwrap();
        let e = CandidateSpec {
            path: ptx.clone(),
            ..spec.clone()
        }
        .preflight()
        .unwrap_err();
        assert!(e.to_string().contains("apply to CUDA C++ sources"), "{e}");
        assert!(CandidateSpec {
            path: ptx,
            ..Default::default()
        }
        .preflight()
        .is_ok());
        let junk = dir.path().join("k.bin");
        std::fs::write(&junk, [0xffu8; 64]).unwrap();
        let e = CandidateSpec {
            path: junk,
            ..Default::default()
        }
        .preflight()
        .unwrap_err();
        assert!(e.to_string().contains("a candidate is a cubin"), "{e}");
        std::fs::write(&src, "a\0b").unwrap();
        assert!(spec.preflight().is_err());
        let d = dir.path().join("d.cu");
        std::fs::create_dir(&d).unwrap();
        assert!(CandidateSpec {
            path: d,
            ..Default::default()
        }
        .preflight()
        .is_err());
        let bad_opt = CandidateSpec {
            options: vec!["-a\nb".into()],
            ..spec
        };
        assert!(bad_opt.preflight().is_err());
    }

    #[test]
    fn a_rejected_source_says_its_first_error_in_one_line() {
        let log = "k.cu(23): error: \"this\" may only be used inside a nonstatic member function\n    this is not CUDA;\n    ^\n\nk.cu(23): error: expected a \";\"\n\n2 errors detected in the compilation of \"k.cu\".\n";
        assert_eq!(
            first_error(log),
            "does not compile: k.cu(23): error: \"this\" may only be used inside a nonstatic member function (and 1 more error(s))"
        );
        assert_eq!(first_error(""), "does not compile: no compiler log");
        assert_eq!(first_error("fatal: x\n"), "does not compile: fatal: x");
    }

    #[test]
    fn long_logs_are_cut_and_made_visible() {
        let log: String = (0..50).map(|i| format!("line {i}\u{7}\n")).collect();
        let v = visible_log(&log);
        assert_eq!(v.lines().count(), 41);
        assert!(v.contains("\\x07") && v.ends_with("10 more line(s)"));
    }
}
