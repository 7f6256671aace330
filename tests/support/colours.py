"""Colours as a browser computes them, and WCAG's contrast between two of them."""

import re

import numpy as np


def luminance(rgb):
    """WCAG's relative luminance of an sRGB colour, 0 to 255 a channel."""
    c = np.asarray(rgb[:3], dtype=float) / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def contrast(a, b):
    dark, light = sorted([luminance(a), luminance(b)])
    return (light + 0.05) / (dark + 0.05)


def css_rgb(value, under=(255, 255, 255)):
    """A computed CSS colour, rgb() or rgba(), made opaque over the colour ``under``."""
    match = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)", value)
    assert match, f"not an sRGB colour: {value}"
    alpha = 1.0 if match[4] is None else float(match[4])
    return tuple(alpha * float(v) + (1 - alpha) * u for v, u in zip(match.groups()[:3], under))
