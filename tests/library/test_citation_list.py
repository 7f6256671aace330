"""The bibliography's markup (_ext/citation_list.py): no ARIA list without list items, and no
role that DPUB-ARIA deprecates."""

import citation_list


def test_the_bibliography_has_neither_a_list_role_nor_entry_roles():
    body = (
        '<div role="list" class="citation-list">'
        '<div class="citation" id="id1" role="doc-biblioentry">A</div>'
        '<div class="citation" id="id2" role="doc-biblioentry">B</div></div>'
    )
    context = {"body": body}
    citation_list.drop_list_role(None, "references", "page.html", context, None)
    assert context["body"] == (
        '<div class="citation-list"><div class="citation" id="id1">A</div>'
        '<div class="citation" id="id2">B</div></div>'
    )


def test_other_pages_are_left_as_they_are():
    context = {"body": '<p role="doc-biblioentry">x</p>'}
    citation_list.drop_list_role(None, "intro", "page.html", context, None)
    assert context["body"] == '<p role="doc-biblioentry">x</p>'
