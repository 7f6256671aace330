"""Checks for the coding exercises of ``chapters/tiny-transformer.md``."""

from .harness import Failed, Raised, call, check, close, shown

__all__ = ["check_diagonal_mass"]


def _weights(b, h, n, dtype, seed):
    """Random ``(b, h, n, n)`` attention weights whose rows sum to 1; every head differs."""
    import torch

    w = torch.rand(b, h, n, n, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    return w / w.sum(dim=-1, keepdim=True)


@check
def check_diagonal_mass(fn):
    """Check ``fn(weights, offset) -> (h,)``: the mean weight query ``i`` puts on key ``i + offset``.

    ``weights`` is a torch tensor ``(b, h, n, n)``, float32 or float64; only queries whose key
    ``i + offset`` exists count, and the mean runs over the batch and those queries. The answer
    is a tensor in the weights' dtype.
    """
    import torch  # only this check needs PyTorch

    def expected(w, offset):
        n = w.shape[-1]
        rows = [i for i in range(n) if 0 <= i + offset < n]
        return torch.stack([w[:, :, i, i + offset] for i in rows], dim=-1).mean(dim=(0, -1))

    cases = [
        (_weights(3, 2, 5, torch.float32, 0), [0, -1, 2, -4]),
        (_weights(1, 4, 3, torch.float64, 1), [1, 0, -2]),
    ]
    for w, offsets in cases:
        n = w.shape[-1]
        for offset in offsets:
            where = (
                f"for weights of shape (b, h, n, n) = {tuple(w.shape)}, dtype {w.dtype}, "
                f"and offset {offset}"
            )
            try:
                got = call(fn, w, offset)
            except Raised as raised:
                raise Failed(
                    f"{where} your function raised {raised.error}. For offset {offset} "
                    "only the queries i with 0 <= i + offset < n have a key to look "
                    "at"
                ) from None
            if not isinstance(got, torch.Tensor):
                raise Failed(
                    f"{where} you returned a {type(got).__name__}; return a torch "
                    "tensor, one number per head"
                )
            want = expected(w, offset)
            if got.shape != want.shape:
                hint = (
                    " You averaged over the heads too; keep one number per head."
                    if got.numel() == 1
                    else ""
                )
                raise Failed(
                    f"{where} the result should have shape (h,) = "
                    f"{tuple(want.shape)}, you returned {tuple(got.shape)}.{hint}"
                )
            if got.dtype != w.dtype:
                raise Failed(
                    f"{where} you returned dtype {got.dtype}: keep the weights' dtype "
                    "(a tensor made with torch.zeros(h) is float32 unless given "
                    "dtype=weights.dtype)"
                )
            if close(got.numpy(), want.numpy()):
                continue
            rows = torch.arange(n)
            wrapped = w[..., rows, (rows + offset) % n].mean(dim=(0, -1))
            count = sum(0 <= i + offset < n for i in range(n))
            if close(got.numpy(), expected(w, -offset).numpy()):
                raise Failed(
                    f"{where} you measured key i - offset, or read weights[..., key, "
                    "query]; the pattern asks for query i's weight on key i + offset "
                    "(offset -1 means one step back)"
                )
            if close(got.numpy(), (want * count).numpy()):
                raise Failed(f"{where} you summed over the queries; take the mean")
            if count < n and close(got.numpy(), (want * count / n).numpy()):
                raise Failed(
                    f"{where} you divided by all n = {n} queries; only the {count} "
                    f"queries whose key i + offset exists count, so divide by {count}"
                )
            if close(got.numpy(), wrapped.numpy()):
                raise Failed(
                    f"{where} you included queries whose key i + offset lies outside "
                    "0..n-1: a negative index wraps around to the end of the row. Leave "
                    "those queries out"
                )
            raise Failed(
                "{} the result should be {}, you returned {}: for each head, the mean "
                "of weights[s, head, i, i + offset] over the batch s and the queries i "
                "that have that key".format(where, *shown(want.numpy(), got.numpy()))
            )
    return (
        "correct: one mean per head, over the batch and the queries that have a key there, "
        "in the weights' dtype"
    )
