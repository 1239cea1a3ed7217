"""Observers with PyTorch's class names, keywords and results (torch.ao.quantization.observer).

Each wraps one octet observer (octet._octet.Observer). Like PyTorch's, calling an observer records the array and
returns it unchanged; calculate_qparams() returns (scale, zero_point) as float32 / int32 arrays of one element per
tensor (or one per channel). Beyond PyTorch: observe(x, name) names the tensor in errors, merge(other) combines the
observations of two observers (so calibration can be sharded), and state() / observer_from_state() save and
restore them as JSON-ready dicts.
"""

from octet import _octet


class _Observer:
    _kind = None

    def __init__(self, **kwargs):
        self._impl = _octet.Observer(self._kind, **kwargs)

    @classmethod
    def with_args(cls, **kwargs):
        """An observer factory for a QConfig (PyTorch's with_args)."""
        return _octet.ObserverSpec(cls._kind, **kwargs)

    @classmethod
    def _wrap(cls, impl):
        obs = cls.__new__(cls)
        obs._impl = impl
        return obs

    def forward(self, x):
        self._impl.observe(x)
        return x

    __call__ = forward

    def observe(self, x, name="tensor"):
        """Records x (float32; other dtypes are converted); `name` names it in errors. Returns x."""
        self._impl.observe(x, name)
        return x

    def calculate_qparams(self):
        return self._impl.calculate_qparams()

    def merge(self, other):
        """Adds the observations of another observer of the same kind and options."""
        self._impl.merge(other._impl)
        return self

    def reset(self):
        self._impl.reset()

    def clone(self):
        return type(self)._wrap(self._impl.clone())

    def state(self):
        """Options and state as a JSON-ready dict (observer_from_state reads it back)."""
        return self._impl.state()

    def load_state(self, state):
        self._impl.load_state(state)

    dtype = property(lambda self: self._impl.dtype)
    qscheme = property(lambda self: self._impl.qscheme)
    quant_min = property(lambda self: self._impl.quant_min)
    quant_max = property(lambda self: self._impl.quant_max)
    min_val = property(lambda self: self._impl.min_val)
    max_val = property(lambda self: self._impl.max_val)
    num_batches = property(lambda self: self._impl.num_batches)
    num_skipped = property(lambda self: self._impl.num_skipped)
    has_observations = property(lambda self: self._impl.has_observations)

    def __repr__(self):
        return "%s(dtype=%s, qscheme=%s, quant_min=%d, quant_max=%d)" % (
            type(self).__name__, self.dtype, self.qscheme, self.quant_min, self.quant_max)


class MinMaxObserver(_Observer):
    _kind = "MinMaxObserver"


class MovingAverageMinMaxObserver(_Observer):
    _kind = "MovingAverageMinMaxObserver"


class PerChannelMinMaxObserver(_Observer):
    _kind = "PerChannelMinMaxObserver"
    ch_axis = property(lambda self: self._impl.ch_axis)


class MovingAveragePerChannelMinMaxObserver(_Observer):
    _kind = "MovingAveragePerChannelMinMaxObserver"
    ch_axis = property(lambda self: self._impl.ch_axis)


class HistogramObserver(_Observer):
    """histogram_variant="upstream" (default) or "legacy_1_13" (PyTorch 1.13's numbers exactly)."""
    _kind = "HistogramObserver"


class PlaceholderObserver(_Observer):
    _kind = "PlaceholderObserver"


class PercentileObserver(_Observer):
    _kind = "PercentileObserver"


class EntropyObserver(_Observer):
    _kind = "EntropyObserver"


class MseObserver(_Observer):
    _kind = "MseObserver"


_CLASSES = {cls._kind: cls for cls in _Observer.__subclasses__()}


def observer_from_state(state):
    """The observer that Observer.state() described, with its state loaded."""
    impl = _octet.observer_from_state(state)
    return _CLASSES[impl.kind]._wrap(impl)
