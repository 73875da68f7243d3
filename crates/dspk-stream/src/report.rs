//! What a scan reports, as one serializable value: `dspk scan --json` prints it, `dspk run`
//! records it, `dspk gather` reads it back, Python's `ScanResult` is made from it.

use dspk_device::describe;
use dspk_types::{ChannelMask, ComputeTarget, DspResult, RationalTime, RecordingInfo, SampleRate};
use serde::{Deserialize, Deserializer, Serialize};

use crate::classify::Flag;
use crate::multi::PassDevice;
use crate::scan::ScanResult;

/// One scan's report.
///
/// Its fields, and those of the values inside it, are in alphabetical order: the order
/// `dspk scan --json` has always printed them in (it printed a `serde_json::Value`, whose
/// objects sort their keys), so that records written before and after read and print alike.
/// Times and figures that cannot be had (a pass of no measurable length) are `null` in JSON
/// and NaN here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanReport {
    /// Channels of the recording.
    pub channel_count: usize,
    /// Every channel's statistics, in the recording's order.
    pub channels: Vec<ChannelFigures>,
    /// Channels flagged dead (flat), ascending.
    pub dead: Vec<usize>,
    /// Where windows were decoded (`staging` or `copy`).
    pub decode: String,
    /// The name of the device the scan ran on (the first, when several did).
    pub device: String,
    /// What each device did.
    pub devices: Vec<DeviceFigures>,
    /// Seconds of recording scanned.
    #[serde(deserialize_with = "float_or_null")]
    pub duration_s: f64,
    /// One past the last sample scanned, as a time from the recording's start.
    pub end: RationalTime,
    /// One past the last sample scanned.
    pub end_sample: u64,
    /// Every channel enabled but the dead and noisy ones.
    #[serde(with = "mask_fields")]
    pub mask: ChannelMask,
    /// Where the mask was written, if it was.
    pub mask_path: Option<String>,
    /// The median standard deviation of the channels that are not dead.
    #[serde(deserialize_with = "float_or_null")]
    pub median_std: f64,
    /// The recording's name.
    pub name: String,
    /// Channels flagged noisy, ascending.
    pub noisy: Vec<usize>,
    /// The standard deviation above which a channel is noisy.
    #[serde(deserialize_with = "float_or_null")]
    pub noisy_threshold: f64,
    /// The channels the built-in synthetic recording was made with dead and noisy; `None`
    /// for a recording read from files.
    pub planted: Option<Planted>,
    /// Seconds of recording scanned per second of wall time.
    #[serde(deserialize_with = "float_or_null")]
    pub realtime_factor: f64,
    /// How the recording was named on the command line (its path, or the synthetic one's
    /// description).
    pub recording: String,
    /// The runtime the scan ran on.
    pub runtime: ComputeTarget,
    /// The recording's sample rate.
    pub sample_rate: SampleRate,
    /// The first sample scanned, as a time from the recording's start.
    pub start: RationalTime,
    /// The first sample scanned.
    pub start_sample: u64,
    /// Stored bytes read and sent to the devices.
    pub stored_bytes: u64,
    /// Stored megabytes (10^6 bytes) per second of wall time.
    #[serde(deserialize_with = "float_or_null")]
    pub throughput_mb_s: f64,
    /// Wall time of the device pass, seconds.
    #[serde(deserialize_with = "float_or_null")]
    pub wall_s: f64,
    /// What the reader noticed without refusing the recording, one sentence each.
    pub warnings: Vec<String>,
    /// Samples per window.
    pub window_samples: u64,
    /// Windows decoded.
    pub windows: usize,
}

/// One channel's row of a [`ScanReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelFigures {
    /// Samples counted.
    pub count: u64,
    /// `dead`, `noisy` or `None`.
    pub flag: Option<String>,
    /// The channel's index in the recording.
    pub index: usize,
    /// Its maximum.
    #[serde(deserialize_with = "float_or_null")]
    pub max: f64,
    /// Its mean.
    #[serde(deserialize_with = "float_or_null")]
    pub mean: f64,
    /// Its minimum.
    #[serde(deserialize_with = "float_or_null")]
    pub min: f64,
    /// Its name.
    pub name: String,
    /// Its root mean square.
    #[serde(deserialize_with = "float_or_null")]
    pub rms: f64,
    /// Its standard deviation.
    #[serde(deserialize_with = "float_or_null")]
    pub std: f64,
    /// The unit of its statistics (`µV`, `dimensionless`).
    pub unit: String,
}

/// One device's part of a [`ScanReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceFigures {
    /// The device's label.
    pub device: String,
    /// The part of its wall time spent setting up, seconds.
    #[serde(deserialize_with = "float_or_null")]
    pub setup_s: f64,
    /// How long after the pass began it started, seconds.
    #[serde(deserialize_with = "float_or_null")]
    pub start_s: f64,
    /// Stored bytes it read.
    pub stored_bytes: u64,
    /// Its stored megabytes per second of its wall time (0 for an instant pass).
    #[serde(deserialize_with = "float_or_null")]
    pub throughput_mb_s: f64,
    /// Its wall time, seconds.
    #[serde(deserialize_with = "float_or_null")]
    pub wall_s: f64,
    /// Windows it decoded.
    pub windows: usize,
}

/// The channels a synthetic recording was made with dead and noisy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planted {
    /// Planted dead (flat) channels.
    pub dead: Vec<usize>,
    /// Planted noisy channels.
    pub noisy: Vec<usize>,
}

/// What a scan's report says of the recording beyond the recording's own information: how it
/// was named, what its reader warned of, what was planted in it, where the mask went.
#[derive(Debug, Clone, Default)]
pub struct ScanSubject {
    /// How the recording is named (its path, or the synthetic one's description).
    pub label: String,
    /// The reader's warnings.
    pub warnings: Vec<String>,
    /// The synthetic recording's planted channels.
    pub planted: Option<Planted>,
    /// Where the mask was written.
    pub mask_path: Option<String>,
}

impl ScanReport {
    /// The report of `result`, a scan of the recording `info` describes, run on `runtime` with
    /// `devices` (those the scan was given: the ones it ran on are named by its result).
    ///
    /// # Errors
    /// A scanned range whose times overflow (not for a range inside the recording).
    pub fn new(
        subject: ScanSubject,
        info: &RecordingInfo,
        result: &ScanResult,
        runtime: ComputeTarget,
        devices: &[PassDevice],
    ) -> DspResult<Self> {
        let range = &result.range;
        let wall_s = result.report.wall.as_secs_f64();
        let scanned = info
            .sample_rate
            .duration_for_samples(range.end - range.start)?;
        let ran = result
            .devices
            .iter()
            .find_map(|d| devices.iter().find(|p| p.label == d.label))
            .or(devices.first());
        let device = ran.map_or_else(String::new, |d| describe(&d.client).adapter_name);
        let per_device = result
            .devices
            .iter()
            .map(|d| {
                let wall = d.report.wall.as_secs_f64();
                DeviceFigures {
                    device: d.label.clone(),
                    setup_s: d.report.setup.as_secs_f64(),
                    start_s: d.started_after.as_secs_f64(),
                    stored_bytes: d.report.stored_bytes,
                    throughput_mb_s: if wall > 0.0 {
                        d.report.stored_bytes as f64 / 1e6 / wall
                    } else {
                        0.0
                    },
                    wall_s: wall,
                    windows: d.report.windows,
                }
            })
            .collect();
        let channels = result
            .stats
            .iter()
            .enumerate()
            .map(|(i, s)| ChannelFigures {
                count: s.count,
                flag: result.classification.flags[i].map(|f| Flag::name(f).to_string()),
                index: i,
                max: s.max,
                mean: s.mean(),
                min: s.min,
                name: info.channels[i].name.clone(),
                rms: s.rms(),
                std: s.std(),
                unit: result.scaling.units[i].to_string(),
            })
            .collect();
        Ok(Self {
            channel_count: info.channel_count(),
            channels,
            dead: result.dead(),
            decode: result.report.route.name().to_string(),
            device,
            devices: per_device,
            duration_s: scanned.as_seconds_f64(),
            end: info.sample_rate.duration_for_samples(range.end)?,
            end_sample: range.end,
            mask: result.mask.clone(),
            mask_path: subject.mask_path,
            median_std: result.classification.median_std,
            name: info.name.clone(),
            noisy: result.noisy(),
            noisy_threshold: result.classification.noisy_threshold,
            planted: subject.planted,
            realtime_factor: scanned.as_seconds_f64() / wall_s,
            recording: subject.label,
            runtime,
            sample_rate: info.sample_rate,
            start: info.sample_rate.duration_for_samples(range.start)?,
            start_sample: range.start,
            stored_bytes: result.report.stored_bytes,
            throughput_mb_s: result.report.stored_bytes as f64 / 1e6 / wall_s,
            wall_s,
            warnings: subject.warnings,
            window_samples: result.window_samples,
            windows: result.report.windows,
        })
    }

    /// The part of the wall time spent setting up before the first window: the longest of the
    /// devices' (they set up side by side).
    pub fn setup_s(&self) -> f64 {
        self.devices.iter().map(|d| d.setup_s).fold(0.0, f64::max)
    }
}

/// A figure that JSON wrote as `null` (a NaN or an infinity: `serde_json` writes no others)
/// reads back as NaN.
fn float_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A [`ChannelMask`] as the report writes it: `disabled` before `total_channels` (the mask
/// file's fields, alphabetical).
mod mask_fields {
    use dspk_types::ChannelMask;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Fields {
        disabled: Vec<usize>,
        total_channels: usize,
    }

    pub(super) fn serialize<S: Serializer>(mask: &ChannelMask, s: S) -> Result<S::Ok, S::Error> {
        Fields {
            disabled: mask.disabled_indices(),
            total_channels: mask.total_channels(),
        }
        .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ChannelMask, D::Error> {
        let f = Fields::deserialize(d)?;
        ChannelMask::from_disabled_indices(f.total_channels, &f.disabled)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_read_back_as_nan_and_masks_keep_their_field_order() {
        let row: DeviceFigures = serde_json::from_str(
            r#"{"device": "0", "setup_s": 0.5, "start_s": 0, "stored_bytes": 10,
                "throughput_mb_s": null, "wall_s": 1.25, "windows": 2}"#,
        )
        .unwrap();
        assert!(row.throughput_mb_s.is_nan());
        assert_eq!((row.setup_s, row.wall_s), (0.5, 1.25));
        #[derive(Serialize, Deserialize)]
        struct M {
            #[serde(with = "mask_fields")]
            mask: ChannelMask,
        }
        let m = M {
            mask: ChannelMask::from_disabled_indices(4, &[1, 3]).unwrap(),
        };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"mask":{"disabled":[1,3],"total_channels":4}}"#);
        let back: M = serde_json::from_str(&text).unwrap();
        assert_eq!(back.mask, m.mask);
        assert!(
            serde_json::from_str::<M>(r#"{"mask":{"disabled":[4],"total_channels":4}}"#).is_err()
        );
    }
}
