"""The Knowledge Solver's training code, in one place: which paths to learn from
(``dataset``, ``kgmw ksl-dataset``), each round of a walk along them as an instruction
example (``rounds``), the examples file checked before work (``examples``), and LoRA
tuning on CPU over it (``lora``, ``kgmw ksl-tune``; needs the ``tune`` extra)."""
