"""Padding, upsampling and adaptive pooling built on the CPU (issue 48), in the
shapes vision models use them: a U-Net decoder's upsampling (nearest by 2,
bilinear with and without align_corners, a fractional scale factor), a style
transfer network's reflection padding, replication padding (cropping too), an
adaptive average pool to a size that does not divide the input. Each call
compiles (counted) and matches eager at assert_close's tolerance."""
import pytest
import torch
import torch.nn.functional as F

import dynoc


@pytest.fixture(autouse=True)
def _fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNOC_CACHE_DIR", str(tmp_path / "cache"))
    dynoc.reset()


def compiled_matches(fn, *args):
    f = dynoc.compile(fn)
    f(*args)
    got = f(*args)
    assert f.compiled_calls() == 1, dynoc.explain(fn)(*args)
    want = fn(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_unet_style_upsampling(dtype):
    def decoder(x, skip):
        up = F.interpolate(x, scale_factor=2, mode="nearest")
        lin = F.interpolate(x, size=(9, 13), mode="bilinear", align_corners=False)
        corners = F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True)
        exact = F.interpolate(x, scale_factor=1.7, mode="nearest-exact")
        frac = F.interpolate(x, scale_factor=1.7, mode="nearest")
        return up + skip, lin, corners, exact, frac

    x, skip = torch.randn(2, 4, 5, 6, dtype=dtype), torch.randn(2, 4, 10, 12, dtype=dtype)
    compiled_matches(decoder, x, skip)


def test_one_and_three_dim_upsampling():
    def up(x1, x3):
        return (F.interpolate(x1, scale_factor=3, mode="linear"),
                F.interpolate(x1, size=11, mode="nearest"),
                F.interpolate(x3, scale_factor=(2, 1.5, 1), mode="trilinear"),
                F.interpolate(x3, scale_factor=2, mode="nearest"))

    compiled_matches(up, torch.randn(2, 3, 7), torch.randn(1, 2, 3, 4, 5))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_reflection_and_replication_padding(dtype):
    def pads(x, v, w):
        return (F.pad(x, (3, 3, 2, 1), mode="reflect"), F.pad(x, (1, 4, 0, 2), mode="replicate"),
                F.pad(x, (-1, 2, 1, -2), mode="replicate"), F.pad(v, (2, 3), mode="reflect"),
                F.pad(w, (1, 1, 2, 0, 1, 1), mode="replicate"))

    x = torch.randint(-50, 50, (2, 3, 5, 6)).to(dtype)
    v = torch.randint(-50, 50, (2, 3, 7)).to(dtype)
    w = torch.randint(-50, 50, (1, 2, 3, 4, 5)).to(dtype)
    compiled_matches(pads, x, v, w)


def test_adaptive_average_pooling_to_sizes_that_do_not_divide():
    def pools(x, v):
        return (F.adaptive_avg_pool2d(x, (3, 5)), F.adaptive_avg_pool2d(x, (7, 1)),
                F.adaptive_avg_pool1d(v, 4), F.adaptive_avg_pool3d(x.unsqueeze(1), (2, 3, 4)))

    compiled_matches(pools, torch.randn(2, 3, 7, 11), torch.randn(2, 3, 10))
