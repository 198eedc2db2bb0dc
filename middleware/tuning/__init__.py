"""Tuning the walk's model on its own steps (``kgmw ksl-tune``): LoRA on CPU over the
instruction dataset ``kgmw ksl-dataset`` exports. Needs the ``tune`` extra."""
