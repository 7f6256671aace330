"""Checks for the coding exercises of ``chapters/tiny-transformer.md``."""

from .harness import Failed, Raised, call, check, close, shown

__all__ = ["check_diagonal_mass"]


@check
def check_diagonal_mass(fn):
    """Check ``fn(weights, offset) -> (h,)``: the mean weight query ``i`` puts on key ``i + offset``.

    ``weights`` is a torch tensor ``(b, h, n, n)``; only queries whose key ``i + offset`` exists
    count, and the mean runs over the batch and those queries.
    """
    import torch  # only this check needs PyTorch

    def expected(w, offset):
        n = w.shape[-1]
        rows = [i for i in range(n) if 0 <= i + offset < n]
        return torch.stack([w[:, :, i, i + offset] for i in rows], dim=-1).mean(dim=(0, -1))

    generator = torch.Generator().manual_seed(0)
    w = torch.rand(3, 2, 5, 5, generator=generator)       # (b, h, n, n)
    w = w / w.sum(dim=-1, keepdim=True)                    # rows sum to 1
    for offset in [0, -1, 2, -4]:
        try:
            got = call(fn, w.clone(), offset)     # a copy: every offset reuses w
        except Raised as raised:
            raise Failed(f"with offset {offset} your function raised {raised.error}. For offset "
                         f"{offset} only the queries i with 0 <= i + offset < n have a key to "
                         "look at") from None
        got = torch.as_tensor(got, dtype=w.dtype)
        want = expected(w, offset)
        where = f"for weights of shape (b, h, n, n) = {tuple(w.shape)} and offset {offset}"
        if got.shape != want.shape:
            hint = (" You averaged over the heads too; keep one number per head."
                    if got.numel() == 1 else "")
            raise Failed(f"{where} the result should have shape (h,) = {tuple(want.shape)}, "
                         f"you returned {tuple(got.shape)}.{hint}")
        if close(got.numpy(), want.numpy()):
            continue
        n = w.shape[-1]
        rows = torch.arange(n)
        wrapped = w[..., rows, (rows + offset) % n].mean(dim=(0, -1))
        if close(got.numpy(), expected(w, -offset).numpy()):
            raise Failed(f"{where} you measured key i - offset; the pattern asks for key "
                         "i + offset (offset -1 means one step back)")
        if close(got.numpy(), (want * sum(0 <= i + offset < n for i in range(n))).numpy()):
            raise Failed(f"{where} you summed over the queries; take the mean")
        if close(got.numpy(), wrapped.numpy()):
            raise Failed(f"{where} you included queries whose key i + offset lies outside "
                         "0..n-1: a negative index wraps around to the end of the row. Leave "
                         "those queries out")
        raise Failed("{} the result should be {}, you returned {}".format(
            where, *shown(want.numpy(), got.numpy())))
    return "correct: one mean per head, over the batch and the queries that have a key there"
