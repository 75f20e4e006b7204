// The axes of one Plotly graph whose labels or titles needed more margin than the figure gave:
// Plotly then widened that margin and drew the whole figure a second time. Colour bars and
// legends are left out: they push the margins before the first drawing, not after it.
graph => {
    const layout = graph._fullLayout;
    if (!layout) return [];
    const title = (layout.title && layout.title.text || '').replace(/<[^>]+>/g, '');
    const found = [];
    for (const [id, pushes] of Object.entries(layout._pushmargin || {})) {
        if (!id.includes('automargin')) continue;
        for (const side of ['l', 'r', 't', 'b']) {
            const push = pushes[side];
            const atEdge = push && (side === 'l' || side === 'b' ? push.val < 0.001 : push.val > 0.999);
            if (atEdge && push.size > layout.margin[side] + 0.5) {
                found.push({title, axis: id, side, needed: Math.round(push.size), given: layout.margin[side]});
            }
        }
    }
    return found;
}
