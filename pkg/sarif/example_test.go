package sarif_test

import (
	"os"

	"github.com/admitd/admitd/pkg/sarif"
)

// A run of one rule with one result, located at a line of a file and at
// an object; Write sets the result's ruleIndex.
func ExampleWrite() {
	driver := sarif.Driver{Name: "checker", Rules: []sarif.Rule{
		{ID: "R1", Name: "NeedsTeam", ShortDescription: &sarif.Text{Text: "every ConfigMap needs a team label"}},
	}}
	_ = sarif.Write(os.Stdout, driver, []sarif.Result{{
		RuleID: "R1", Level: sarif.LevelError, Message: sarif.Text{Text: "no team label"},
		Locations: []sarif.Location{{
			PhysicalLocation: &sarif.PhysicalLocation{ArtifactLocation: sarif.ArtifactLocation{URI: "config.yaml"}, Region: &sarif.Region{StartLine: 3}},
			LogicalLocations: []sarif.LogicalLocation{{FullyQualifiedName: "ConfigMap/shop/a", Kind: "object"}},
		}},
	}})
	// Output:
	// {
	//   "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
	//   "version": "2.1.0",
	//   "runs": [
	//     {
	//       "tool": {
	//         "driver": {
	//           "name": "checker",
	//           "rules": [
	//             {
	//               "id": "R1",
	//               "name": "NeedsTeam",
	//               "shortDescription": {
	//                 "text": "every ConfigMap needs a team label"
	//               }
	//             }
	//           ]
	//         }
	//       },
	//       "results": [
	//         {
	//           "ruleId": "R1",
	//           "ruleIndex": 0,
	//           "level": "error",
	//           "message": {
	//             "text": "no team label"
	//           },
	//           "locations": [
	//             {
	//               "physicalLocation": {
	//                 "artifactLocation": {
	//                   "uri": "config.yaml"
	//                 },
	//                 "region": {
	//                   "startLine": 3
	//                 }
	//               },
	//               "logicalLocations": [
	//                 {
	//                   "fullyQualifiedName": "ConfigMap/shop/a",
	//                   "kind": "object"
	//                 }
	//               ]
	//             }
	//           ]
	//         }
	//       ]
	//     }
	//   ]
	// }
}
