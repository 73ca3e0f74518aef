// The headline figures of a suite (search/headline.h) as the HTML report's table: a human label,
// the value to three significant digits and a short note on how it is counted. A simulated
// headline labels its costs modelled and gives the seconds the run really took.
#pragma once

#include <vector>

#include "report/html_report.h"
#include "search/headline.h"

namespace ucut::report {

std::vector<HtmlFigure> headline_figures(const search::Headline& h);

}  // namespace ucut::report
