"""The computations behind each teaching page, built on the engine.

One module a lesson: `scaling` (why √dk), `cell` (follow one cell), `mask_lab`,
`quiz` (predict, then reveal) and `custom` (typed numbers and comparisons). The engine
itself (attention, masks, multi-head, stages, the toy pipeline) lives one level up.
"""
