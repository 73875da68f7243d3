"""dspk's Open Ephys probe geometry against SpikeInterface's ``read_openephys(...).get_probe()``
(probeinterface's ``read_openephys_neuropixels``) on folders written here: a record node's
``settings.xml`` in the Neuropixels plugin's layout (modelled on the files of probeinterface's
``tests/data/openephys``) beside a recording of the probe's stream. Positions to 1e-6 µm, shank
and contact ids, ``device_channel_indices`` and the per-channel sample shift, read through
``dspk info --json`` and ``dspk.open(...).probe``."""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

from recordings import openephys_channel, write_openephys_recording

NODE = "Record Node 101"
STREAM = "Neuropix-PXI-100.ProbeA-AP"


def catalogue(part: str) -> dict:
    """probeinterface's catalogue entry of ``part`` (the numbers the plugin draws with)."""
    from probeinterface.neuropixels_tools import _load_np_probe_features

    return _load_np_probe_features()["neuropixels_probes"][part]


def drawn(part: str, electrodes: list[tuple[int, int]]) -> tuple[list[float], list[float]]:
    """Where the plugin draws each ``(shank, electrode)``: x from the shank's left edge (even
    rows at the even-row offset, odd rows at the odd-row one, plus the column pitch and the
    shank's offset), y by row."""
    spec = catalogue(part)
    cols = int(spec["cols_per_shank"])
    x_pitch, y_pitch = float(spec["electrode_pitch_horz_um"]), float(spec["electrode_pitch_vert_um"])
    even = float(spec["even_row_horz_offset_left_edge_to_leftmost_electrode_center_um"])
    odd = float(spec["odd_row_horz_offset_left_edge_to_leftmost_electrode_center_um"])
    shank_pitch = float(spec["shank_pitch_um"])
    xs, ys = [], []
    for shank, e in electrodes:
        row, col = divmod(e, cols)
        xs.append((even if row % 2 == 0 else odd) + col * x_pitch + shank * shank_pitch)
        ys.append(row * y_pitch)
    return xs, ys


def channels_xml(values: list[str], xs: list[float], ys: list[float]) -> str:
    """``CHANNELS``, ``ELECTRODE_XPOS`` and ``ELECTRODE_YPOS`` with one ``CH{k}`` each."""
    def attrs(vals) -> str:
        return " ".join(f'CH{k}="{v:g}"' if isinstance(v, float) else f'CH{k}="{v}"' for k, v in enumerate(vals))

    return f"<CHANNELS {attrs(values)}/>\n<ELECTRODE_XPOS {attrs(xs)}/>\n<ELECTRODE_YPOS {attrs(ys)}/>"


def settings_xml(gui: str, plugin: str, part: str, electrodes_xml: str, recording_state: str | None = None) -> str:
    """A ``settings.xml`` of GUI ``gui``: a Neuropix-PXI processor of plugin version ``plugin``
    with the streams ``ProbeA-AP`` and ``ProbeA-LFP`` and one ``NP_PROBE`` (under ``EDITOR``
    before GUI 0.9, under ``EDITOR/CUSTOM_PARAMETERS`` from it), then the record node (with the
    stream's ``recording_state`` where given)."""
    streams = "".join(
        f'<STREAM name="ProbeA-{b}" description="description" sample_rate="{r}" channel_count="384" '
        f'device_name="Neuropixels"><PARAMETERS/></STREAM>'
        for b, r in (("AP", "30000.0"), ("LFP", "2500.0"))
    )
    probe = (
        f'<NP_PROBE slot="2" port="1" dock="1" probe_serial_number="18194814141" probe_part_number="{part}" '
        f'probe_name="Neuropixels" num_adcs="32" custom_probe_name="18194814141" ZoomHeight="80" '
        f'ZoomOffset="50" referenceChannel="Ext" isEnabled="1">{electrodes_xml}</NP_PROBE>'
    )
    new = tuple(int(p) for p in gui.split(".")[:2]) >= (0, 9)
    editor = f"<CUSTOM_PARAMETERS>{probe}</CUSTOM_PARAMETERS>" if new else probe
    record = (
        f'<CUSTOM_PARAMETERS><STREAM name="ProbeA-AP" source_node_id="100" sample_rate="30000.0" '
        f'channel_count="384" recording_state="{recording_state}"/></CUSTOM_PARAMETERS>'
        if recording_state is not None
        else ""
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>

<SETTINGS>
  <INFO>
    <VERSION>{gui}</VERSION>
    <PLUGIN_API_VERSION>8</PLUGIN_API_VERSION>
    <DATE>2 Dec 2026 12:00:00</DATE>
    <OS>Windows 10</OS>
  </INFO>
  <SIGNALCHAIN>
    <PROCESSOR name="Neuropix-PXI" insertionPoint="0" pluginName="Neuropix-PXI" type="4" index="0"
               libraryName="Neuropix-PXI" libraryVersion="{plugin}" processorType="2" nodeId="100">
      <GLOBAL_PARAMETERS/>
      {streams}
      <CUSTOM_PARAMETERS/>
      <EDITOR isCollapsed="0" isDrawerOpen="0" displayName="Neuropix-PXI" activeStream="0">
        <NEUROPIXELS_EDITOR MainSyncSlot="-1" SendSyncAsContinuous="0"/>
        {editor}
      </EDITOR>
    </PROCESSOR>
    <PROCESSOR name="Record Node" insertionPoint="1" pluginName="Record Node" type="0" index="3"
               libraryName="" libraryVersion="" processorType="8" nodeId="101">
      <PROCESSOR_PARAMETERS engine="0" events="1" spikes="1"/>
      {record}
      <EDITOR isCollapsed="0" displayName="Record Node"/>
    </PROCESSOR>
  </SIGNALCHAIN>
</SETTINGS>
"""


def np1_banks(rng) -> tuple[list[str], list[tuple[int, int]]]:
    """NP1000: a random bank for each readout channel (electrode = bank × 384 + channel, under
    960); ``CHANNELS`` values are the banks."""
    banks = [int(rng.integers(0, 3 if ch < 960 - 2 * 384 else 2)) for ch in range(384)]
    return [str(b) for b in banks], [(0, b * 384 + ch) for ch, b in enumerate(banks)]


def np2_four_shanks(rng) -> tuple[list[str], list[tuple[int, int]]]:
    """NP2014: a random shank and bank for each readout channel (readout 0 on shank 0's first
    electrode, so the leftmost drawn x is the first column's); values ``bank:shank``."""
    values, electrodes = [], []
    for ch in range(384):
        shank = 0 if ch == 0 else int(rng.integers(0, 4))
        bank = 0 if ch == 0 else int(rng.integers(0, (1280 - 1 - ch) // 384 + 1))
        values.append(f"{bank}:{shank}")
        electrodes.append((shank, bank * 384 + ch))
    return values, electrodes


def write_folder(root: Path, rng, settings: str, channels: int, sync: bool) -> Path:
    """The record node's ``settings.xml`` and ``experiment1/recording1`` with the probe's AP
    stream of ``channels`` headstage channels (and the sync channel last); the stream's folder."""
    names = [openephys_channel(rng, f"CH{i + 1}", "headstage") for i in range(channels)]
    if sync:
        names.append(("ProbeA-AP_SYNC", "headstage", 1.0))
    rec = root / NODE / "experiment1" / "recording1"
    (s,) = write_openephys_recording(rec, rng, [(STREAM, 30000.0, names, int(rng.integers(200, 400)))])
    (root / NODE / "settings.xml").write_text(settings)
    return s.dir


def cases(rng) -> dict[str, tuple[str, int, bool]]:
    """Each case's ``settings.xml``, the stream's channel count and whether it has a sync channel."""
    values, electrodes = np1_banks(rng)
    np1 = settings_xml("0.6.7", "0.4.1", "NP1000", channels_xml(values, *drawn("NP1000", electrodes)))
    values, electrodes = np2_four_shanks(rng)
    np2 = settings_xml("1.0.1", "1.0.2", "NP2014", channels_xml(values, *drawn("NP2014", electrodes)))
    chosen = rng.choice(1280, size=384, replace=False)
    selected = "<SELECTED_ELECTRODES " + " ".join(f'CH{k}="{e}"' for k, e in enumerate(chosen)) + "/>"
    state = "".join("1" if rng.random() < 0.8 else "0" for _ in range(384))
    np2_subset = settings_xml("1.0.1", "1.1.0", "NP2000", selected, recording_state=state)
    return {
        "NP1000 GUI 0.6, drawn positions, sync channel": (np1, 384, True),
        "NP2014 GUI 1.0, four shanks": (np2, 384, False),
        "NP2000 GUI 1.0, selected electrodes, saved subset": (np2_subset, state.count("1"), False),
    }


def shanks(probe) -> np.ndarray:
    ids = probe.shank_ids
    if ids is None or (len(ids) and ids[0] == ""):
        return np.zeros(probe.get_contact_count(), int)
    return np.asarray(ids).astype(int)


def test_openephys_probes_equal_spikeinterfaces(tmp_path, rng, dspk_program):
    """For each plugin layout, dspk's probe (``dspk info --json`` and ``dspk.open(...).probe``)
    is SpikeInterface's: positions, ids, shanks, channel indices and sample shifts."""
    import dspk

    pi = pytest.importorskip("probeinterface")
    se = pytest.importorskip("spikeinterface.extractors")
    for k, (label, (settings, channels, sync)) in enumerate(cases(rng).items()):
        root = tmp_path / f"case{k}"
        stream_dir = write_folder(root, rng, settings, channels, sync)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            si = se.read_openephys(root)
            ref = si.get_probe()
            ref_shifts = si.get_property("inter_sample_shift")
        assert ref.get_contact_count() == channels, label

        done = subprocess.run([dspk_program, "info", "--json", str(stream_dir)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "warning" not in done.stderr, f"{label}: {done.stderr}"
        chans = json.loads(done.stdout)["probe"]["contacts"]["channels"]
        assert len(chans) == channels + sync, label
        idx = [i for i, c in enumerate(chans) if c is not None]
        assert idx == list(range(channels)), f"{label}: the sync channel alone has no contact"
        pos = np.array([[chans[i]["x_um"], chans[i]["y_um"]] for i in idx])
        assert np.allclose(pos, ref.contact_positions, atol=1e-6, rtol=0), label
        assert [chans[i]["id"] for i in idx] == list(ref.contact_ids), label
        assert np.array_equal([chans[i].get("shank", 0) for i in idx], shanks(ref)), label
        assert np.array_equal(idx, ref.device_channel_indices), label
        cycle = json.loads(done.stdout)["probe"]["contacts"]["adc_cycle"]["cycle_samples"]
        ours_shifts = np.array([chans[i]["adc"]["order"] / cycle for i in idx])
        assert ref_shifts is not None and np.allclose(ours_shifts, ref_shifts, atol=1e-12, rtol=0), label

        rec = dspk.open(stream_dir)
        ours = rec.probe
        assert isinstance(ours, pi.Probe), label
        assert np.allclose(ours.contact_positions, ref.contact_positions, atol=1e-6, rtol=0), label
        assert list(ours.contact_ids) == list(ref.contact_ids), label
        assert np.array_equal(ours.device_channel_indices, ref.device_channel_indices), label
        assert np.array_equal(shanks(ours), shanks(ref)), label


def test_a_settings_file_without_geometry_opens_with_one_warning(tmp_path, rng, dspk_program):
    """A ``settings.xml`` whose probe cannot be placed (a part number outside the catalogue)
    leaves the stream opening, without a probe, with one ``warning:`` line naming the file; a
    folder without ``settings.xml`` has no probe and no warning."""
    import dspk

    values, electrodes = np1_banks(rng)
    settings = settings_xml("0.6.7", "0.4.1", "NP1000", channels_xml(values, *drawn("NP1000", electrodes)))
    stream_dir = write_folder(tmp_path / "bad", rng, settings.replace('probe_part_number="NP1000"', 'probe_part_number="NP0000"'), 384, False)
    done = subprocess.run([dspk_program, "info", "--json", str(stream_dir)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["probe"] is None
    lines = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(lines) == 1 and "settings.xml" in lines[0] and "NP0000" in lines[0], done.stderr
    assert dspk.open(stream_dir).probe is None

    plain = write_folder(tmp_path / "plain", rng, settings, 384, False)
    (tmp_path / "plain" / NODE / "settings.xml").unlink()
    done = subprocess.run([dspk_program, "info", "--json", str(plain)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and json.loads(done.stdout)["probe"] is None and "warning" not in done.stderr, done.stderr
