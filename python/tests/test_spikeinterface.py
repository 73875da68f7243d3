"""SpikeInterface both ways: DspkRecording against SpikeInterface's own SpikeGLX reader (Neo)
on the same files, through process pools too; from_spikeinterface scans equal to dspk's own."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import spikeinterface.core as si
import spikeinterface.extractors as se

import dspk
from dspk.spikeinterface import DspkRecording


def reference(spikeglx):
    """SpikeInterface's own reader of the file (through Neo)."""
    return se.read_spikeglx(spikeglx.folder, stream_id="imec0.ap")


def test_traces_equal_spikeinterfaces_reader(spikeglx, rng):
    ours, theirs = DspkRecording(spikeglx.bin), reference(spikeglx)
    assert ours.get_num_channels() == theirs.get_num_channels() == 384
    assert ours.get_num_samples() == theirs.get_num_samples() == spikeglx.frames.shape[0]
    assert ours.get_sampling_frequency() == theirs.get_sampling_frequency()
    assert ours.get_dtype() == theirs.get_dtype()
    np.testing.assert_allclose(ours.get_channel_gains(), theirs.get_channel_gains(), rtol=1e-7)
    np.testing.assert_array_equal(ours.get_channel_offsets(), theirs.get_channel_offsets())
    for _ in range(4):
        a = int(rng.integers(0, 10_000))
        b = a + int(rng.integers(1, 4000))
        np.testing.assert_array_equal(
            ours.get_traces(start_frame=a, end_frame=b), theirs.get_traces(start_frame=a, end_frame=b)
        )
        uv_ours = ours.get_traces(start_frame=a, end_frame=b, return_in_uV=True)
        uv_theirs = theirs.get_traces(start_frame=a, end_frame=b, return_in_uV=True)
        assert uv_ours.dtype == uv_theirs.dtype == np.float32 and uv_ours.shape == uv_theirs.shape
        np.testing.assert_allclose(uv_ours, uv_theirs, rtol=2e-7, atol=0)
        pick = rng.choice(384, size=5, replace=False)
        ids_ours, ids_theirs = ours.get_channel_ids()[pick], theirs.get_channel_ids()[pick]
        np.testing.assert_allclose(
            ours.get_traces(start_frame=a, end_frame=b, channel_ids=ids_ours, return_in_uV=True),
            theirs.get_traces(start_frame=a, end_frame=b, channel_ids=ids_theirs, return_in_uV=True),
            rtol=2e-7,
        )
    c = ours.get_traces(end_frame=100, return_in_uV=True, order="C")
    assert c.flags.c_contiguous


def test_the_probe_is_spikeinterfaces(spikeglx):
    ours, theirs = DspkRecording(spikeglx.bin), reference(spikeglx)
    np.testing.assert_array_equal(ours.get_channel_locations(), theirs.get_channel_locations())
    assert ours.get_probe().get_contact_count() == 384


def shanks(probe) -> np.ndarray:
    """A probeinterface probe's shank ids as numbers (0 where it gives none)."""
    if probe.shank_ids is None:
        return np.zeros(probe.get_contact_count(), int)
    return probe.shank_ids.astype(int)


def test_the_probe_is_dspks_own_and_equals_read_spikeglx(spikeglx, monkeypatch):
    """DspkRecording attaches dspk's probe (never probeinterface's reader), equal to the one
    SpikeInterface's ``read_spikeglx`` attaches, and a local common reference runs on it."""
    import probeinterface
    from spikeinterface.preprocessing import common_reference

    theirs = reference(spikeglx)

    def refuse(*args, **kwargs):
        raise AssertionError("DspkRecording called probeinterface.read_spikeglx")

    monkeypatch.setattr(probeinterface, "read_spikeglx", refuse)
    ours = DspkRecording(spikeglx.bin)
    a, b = ours.get_probe(), theirs.get_probe()
    np.testing.assert_array_equal(a.contact_positions, b.contact_positions)
    np.testing.assert_array_equal(a.contact_ids, b.contact_ids)
    # probeinterface leaves a single-shank probe's shank ids unset; dspk says shank 0.
    np.testing.assert_array_equal(shanks(a), shanks(b))
    np.testing.assert_array_equal(a.device_channel_indices, b.device_channel_indices)
    np.testing.assert_array_equal(a.contact_shapes, b.contact_shapes)
    assert [p["width"] for p in a.contact_shape_params] == [p["width"] for p in b.contact_shape_params]
    np.testing.assert_array_equal(ours.get_channel_groups(), theirs.get_channel_groups())
    np.testing.assert_allclose(
        ours.get_property("inter_sample_shift"), theirs.get_property("inter_sample_shift"), rtol=0, atol=1e-12
    )
    referenced = common_reference(ours, reference="local")
    traces = referenced.get_traces(end_frame=200)
    assert traces.shape == (200, 384) and np.isfinite(traces).all()


def test_gains_set_by_the_user_are_applied(spikeglx):
    ours = DspkRecording(spikeglx.bin)
    raw = ours.get_traces(end_frame=50)
    ours.set_channel_gains(2.0)
    np.testing.assert_array_equal(ours.get_traces(end_frame=50, return_in_uV=True), raw.astype(np.float32) * 2)


def test_pickles_through_its_kwargs(spikeglx):
    ours = DspkRecording(spikeglx.bin)
    back = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(back.get_traces(end_frame=300), ours.get_traces(end_frame=300))
    assert si.load(ours.to_dict()).get_num_samples() == ours.get_num_samples()


@pytest.mark.parametrize("mp_context", ["fork", "spawn"])
def test_save_through_a_process_pool(spikeglx, tmp_path, mp_context):
    ours = DspkRecording(spikeglx.bin)
    saved = ours.save(folder=tmp_path / f"saved-{mp_context}", n_jobs=2, chunk_size=3000,
                      mp_context=mp_context, progress_bar=False)
    theirs = reference(spikeglx)
    np.testing.assert_array_equal(saved.get_traces(), theirs.get_traces())
    np.testing.assert_allclose(saved.get_traces(return_in_uV=True), theirs.get_traces(return_in_uV=True), rtol=2e-7)


def test_from_spikeinterface_scans_as_the_file(spikeglx, runtime):
    theirs = reference(spikeglx)
    via_si = dspk.from_spikeinterface(theirs)
    assert via_si.format == "python" and via_si.channel_count == 384
    assert via_si.sample_rate == 30000 and via_si.dtype == np.dtype("int16")
    direct = dspk.open(spikeglx.bin)
    np.testing.assert_array_equal(via_si.read_stored(), direct.read_stored(list(range(384))))
    np.testing.assert_allclose(via_si.read(start=5, stop=900), direct.read(list(range(384)), 5, 900), rtol=2e-7)
    a = dspk.scan(via_si, runtime=runtime, window_samples=4000, progress=False)
    b = dspk.scan(direct, runtime=runtime, window_samples=4000, progress=False)
    np.testing.assert_allclose(a.min, b.min[:384], rtol=2e-7)
    np.testing.assert_allclose(a.max, b.max[:384], rtol=2e-7)
    np.testing.assert_allclose(a.mean, b.mean[:384], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(a.rms, b.rms[:384], rtol=1e-6)
    assert a.dead == [c for c in b.dead if c < 384]
    assert (a.start, a.end, a.windows) == (b.start, b.end, b.windows)


def test_a_python_source_passes_dspks_conformance_suite(spikeglx, rng):
    via_si = dspk.from_spikeinterface(reference(spikeglx))
    dspk._dspk._check_conformance(via_si, int(rng.integers(0, 2**32)))


def test_a_failing_reader_is_an_error_not_a_crash(runtime):
    class Broken(si.NumpyRecording):
        def get_traces(self, *args, **kwargs):
            raise RuntimeError("disk on fire")

    rec = Broken([np.zeros((100, 2), dtype=np.int16)], sampling_frequency=1000.0)
    wrapped = dspk.from_spikeinterface(rec)
    with pytest.raises(dspk.RecordingFileError, match="raised RuntimeError: disk on fire"):
        wrapped.read()
    with pytest.raises(dspk.DspkError, match="disk on fire"):
        dspk.scan(wrapped, runtime=runtime, progress=False)
    with pytest.raises(dspk.InvalidInputError, match="segment_index 3 does not exist"):
        dspk.from_spikeinterface(rec, segment_index=3)


def neo_channels(folder):
    """Neo's own channel table of a SpikeGLX folder (what ``read_spikeglx`` builds on)."""
    from neo.rawio import SpikeGLXRawIO

    raw = SpikeGLXRawIO(dirname=str(folder))
    raw.parse_header()
    return raw.header["signal_channels"]


def test_sync_channels_and_uv_per_unit_are_neos(spikeglx):
    """Which channels carry no signal and how many µV a unit is come from dspk's reader, and
    equal Neo's reading of the same file: Neo puts the sync word in a stream of its own
    (``imec0.ap-SYNC``) and states each channel's unit; the ``.meta`` counts one SY channel."""
    neo = neo_channels(spikeglx.folder)
    ours = dspk.open(spikeglx.bin)
    names = ours.channel_names
    sync = [names.index(c["name"]) for c in neo if c["stream_id"] == "imec0.ap-SYNC"]
    sy_count = int(spikeglx.meta.read_text().split("snsApLfSy=")[1].split("\n")[0].split(",")[2])
    assert ours.sync_channels == sync == list(range(385 - sy_count, 385))
    assert ours.channel_kinds == ["sync" if c in sync else "signal" for c in range(385)]
    uv_per = {"uV": 1.0, "µV": 1.0, "mV": 1e3, "V": 1e6}
    signal = [c for c in neo if c["stream_id"] == "imec0.ap"]
    factors = ours.uv_per_unit
    assert factors.dtype == np.float64 and factors.shape == (385,)
    np.testing.assert_array_equal(factors[: len(signal)], [uv_per[c["units"]] for c in signal])
    assert np.isnan(factors[sync]).all(), "the sync word is not a voltage"
    assert list(DspkRecording(spikeglx.bin).get_channel_ids()) == [c["name"] for c in signal]


def test_ni_digital_words_are_sync_channels_kept_as_neo_keeps_them(tmp_path, rng):
    """An NI-DAQ file: its digital word (``snsMnMaXaDw=2,1,2,1``: the sixth channel) carries no
    signal, and stays in SpikeInterface's channels as in Neo's ``nidq`` stream."""
    samples = 1000
    frames = rng.integers(-2000, 2000, size=(samples, 6), dtype=np.int16)
    path = tmp_path / "run_g0_t0.nidq.bin"
    path.write_bytes(frames.astype("<i2").tobytes())
    chan_map = "(2,1,2,1,1)(MN0;0:0)(MN1;1:1)(MA0;2:2)(XA0;3:3)(XA1;4:4)(XD0;5:5)"
    meta = [
        "typeThis=nidq", "niSampRate=25000", "niAiRangeMax=5", "niAiRangeMin=-5",
        "niMaxInt=32768", "niMNGain=200", "niMAGain=2", "snsMnMaXaDw=2,1,2,1", "nSavedChans=6",
        "snsSaveChanSubset=all", "firstSample=0", f"fileName={path}",
        f"fileSizeBytes={frames.nbytes}", f"fileTimeSecs={samples / 25000}",
        f"~snsChanMap={chan_map}",
    ]
    path.with_suffix(".meta").write_text("\n".join(meta) + "\n")
    ours = dspk.open(path)
    assert ours.sync_channels == [5]
    assert ours.channel_kinds == ["signal"] * 5 + ["digital"]
    np.testing.assert_array_equal(ours.uv_per_unit[:5], np.ones(5))
    assert np.isnan(ours.uv_per_unit[5])
    neo = neo_channels(tmp_path)
    assert [c["name"] for c in neo if c["stream_id"] == "nidq"] == ours.channel_names
    assert list(DspkRecording(path).get_channel_ids()) == ours.channel_names
