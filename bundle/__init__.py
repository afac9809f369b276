"""The task bundle: its models (`model.py`), its integrity (`integrity.py`) and its one reader."""

from wac.bundle.reader import Bundle

__all__ = ["Bundle"]
