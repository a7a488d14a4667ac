"""Measuring recall on public benchmarks: pure parsing and scoring, with the runs beside them."""
