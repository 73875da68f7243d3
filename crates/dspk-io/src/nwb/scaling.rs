//! A series' µV scaling: `conversion`, `offset` and `channel_conversion`, as the NWB
//! specification combines them, and the warning for the Open Ephys writer's double scaling.

use dspk_types::DspResult;

use super::h5::{H5, attr_number};

/// Per channel, the gain and offset from stored values to µV.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scaling {
    /// µV per stored unit.
    pub(crate) gains: Vec<f32>,
    /// µV added after the gain.
    pub(crate) offsets: Vec<f32>,
    /// `data`'s `conversion` attribute (1 where missing).
    pub(crate) conversion: f64,
    /// Whether the series has `channel_conversion`.
    pub(crate) channel_conversion: bool,
}

/// The scaling of the series at `series` of `channels` channels: volts are
/// `data × conversion × channel_conversion[ch] + offset`, µV those × 10⁶. `electrode_offsets_v`
/// (the electrodes table's `offset` column) stands in where the series has no `offset`.
pub(crate) fn scaling(
    h5: &H5,
    series: &str,
    channels: usize,
    electrode_offsets_v: Option<&[f64]>,
    warnings: &mut Vec<String>,
) -> DspResult<Scaling> {
    let data_path = format!("{series}/data");
    let data = h5.dataset(&data_path)?;
    let number = |name: &str, default: f64| -> DspResult<f64> {
        let v = attr_number(data.attribute(name))
            .map_err(|e| h5.err(&data_path, format!("attribute {name}: {e}")))?
            .unwrap_or(default);
        if !v.is_finite() {
            return Err(h5.err(
                &data_path,
                format!("attribute {name} is {v}, not a finite number"),
            ));
        }
        Ok(v)
    };
    let conversion = number("conversion", 1.0)?;
    let offset = number("offset", 0.0)?;
    let group = h5.group(series)?;
    let cc_path = format!("{series}/channel_conversion");
    let per_channel = if h5.has_dataset(&group, series, "channel_conversion")? {
        let cc = h5.floats(&cc_path)?;
        if cc.len() != channels {
            return Err(h5.err(
                &cc_path,
                format!("holds {} values for {channels} channels of data", cc.len()),
            ));
        }
        Some(cc)
    } else {
        None
    };
    // Compared as float32, the type writers store both in (one may be float64 in the file).
    if let Some(cc) = &per_channel
        && conversion != 1.0
        && cc.iter().all(|&c| c as f32 == conversion as f32)
    {
        let conversion = shortest(conversion);
        warnings.push(format!(
            "{}: /{series}: conversion and channel_conversion are both {conversion} (an Open \
             Ephys GUI writer stores the bit-volts in both); read as the NWB specification says, \
             the values are scaled by both (as SpikeInterface's read_nwb_recording reads them): \
             divide by {conversion} for the values the writer meant",
            h5.path.display()
        ));
    }
    let mut gains = Vec::with_capacity(channels);
    let mut offsets = Vec::with_capacity(channels);
    for ch in 0..channels {
        let volts = conversion * per_channel.as_ref().map_or(1.0, |cc| cc[ch]);
        let gain = (volts * 1e6) as f32;
        if !gain.is_finite() {
            return Err(h5.err(
                &cc_path,
                format!("channel {ch}'s gain, {volts} V per unit, is not a finite 32-bit µV gain"),
            ));
        }
        let off_v = match electrode_offsets_v {
            Some(o) if offset == 0.0 => o[ch],
            _ => offset,
        };
        let off = (off_v * 1e6) as f32;
        if !off.is_finite() {
            return Err(h5.err(
                &data_path,
                format!("channel {ch}'s offset, {off_v} V, is not a finite 32-bit µV offset"),
            ));
        }
        gains.push(gain);
        offsets.push(off);
    }
    Ok(Scaling {
        gains,
        offsets,
        conversion,
        channel_conversion: per_channel.is_some(),
    })
}

/// `v` as the shortest decimal that reads back as it: as a 32-bit float where it is one (NWB
/// writers store `conversion` as float32: `0.00000005`, not `0.00000005000000058430487`).
pub(crate) fn shortest(v: f64) -> String {
    let single = v as f32;
    if f64::from(single) == v {
        format!("{single}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::shortest;

    #[test]
    fn float32_values_print_as_float32() {
        assert_eq!(shortest(f64::from(5e-8f32)), "0.00000005");
        assert_eq!(shortest(0.1), "0.1");
        assert_eq!(shortest(1.0 / 3.0), "0.3333333333333333");
    }
}
