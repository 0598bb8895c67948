//! `gpu-endpoint device`: the measurement device, as a table or `DeviceInfo` JSON.

use clap::Args;

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
        println!(
            "{}",
            serde_json::to_string_pretty(&info).map_err(|e| CliError::Runtime(e.to_string()))?
        );
        return Ok(());
    }
    println!("backend     {} ({})", info.backend, selected.reason);
    println!("name        {}", info.name);
    println!("arch        {}", info.arch);
    if let Some([major, minor]) = info.compute_capability {
        println!("compute     sm_{major}{minor}");
    }
    if let Some(cores) = info.cpu_cores {
        println!("cores       {cores}");
    }
    if let Some(sms) = info.sm_count {
        println!("SMs         {sms}");
    }
    println!("memory      {:.0} MB", info.memory_total_mb);
    for (name, version) in &info.versions {
        println!("{name:<11} {version}");
    }
    println!("catalog key {}", info.matched_key.as_deref().unwrap_or("(none)"));
    println!(
        "measurable  {}",
        info.measurable_precisions
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
