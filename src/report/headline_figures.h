// The headline figures of a suite (app/headline.h) as the HTML report's table: a human label,
// the value to three significant digits and a short note on how it is counted. A simulated
// headline labels its costs modelled and gives the seconds the run really took. A problem's
// outcome (app/headline.h) becomes its row on the page the same way.
#pragma once

#include <vector>

#include "report/html_report.h"
#include "app/headline.h"

namespace ucut::report {

std::vector<HtmlFigure> headline_figures(const app::Headline& h);

// The page's row of one problem; `searched` false: it never reached a search ("not searched").
HtmlProblem html_problem(const app::ProblemOutcome& oc, bool searched = true);

}  // namespace ucut::report
