//! `gpu-endpoint device`: the measurement device, as a table or `DeviceInfo` JSON (written through
//! roofline-cli's output edge, which drops control characters from the driver's names).

use clap::Args;
use roofline_cli::output::{emit, json};
use roofline_core::format;

use super::{BackendArgs, CliError};

/// `device` options.
#[derive(Debug, Clone, Args)]
pub struct DeviceArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Backend.
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Runs `device`.
///
/// # Errors
/// [`CliError::Usage`] when the backend cannot be selected; [`CliError::Runtime`] when the JSON cannot be
/// written.
pub fn run(args: &DeviceArgs) -> Result<(), CliError> {
    let selected = args.backend.select()?;
    let info = selected.backend.device_info();
    if args.json {
        return json(&info);
    }
    let mut lines = vec![
        format!("backend     {} ({})", info.backend, selected.reason),
        format!("name        {}", info.name),
        format!("arch        {}", info.arch),
    ];
    if let Some([major, minor]) = info.compute_capability {
        lines.push(format!("compute     sm_{major}{minor}"));
    }
    if let Some(cores) = info.cpu_cores {
        lines.push(format!("cores       {cores}"));
    }
    if let Some(sms) = info.sm_count {
        lines.push(format!("SMs         {sms}"));
    }
    lines.push(format!(
        "memory      {}",
        format::capacity(info.memory_total_bytes)
    ));
    lines.extend(
        info.versions
            .iter()
            .map(|(name, version)| format!("{name:<11} {version}")),
    );
    lines.push(format!(
        "catalog key {}",
        info.matched_key.as_deref().unwrap_or("(none)")
    ));
    lines.push(format!(
        "measurable  {}\n",
        info.measurable_precisions
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    emit(&lines.join("\n"))
}
