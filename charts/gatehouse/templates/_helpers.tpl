{{/*
Labels every object carries: deploy/default's, plus commonLabels.
*/}}
{{- define "gatehouse.labels" -}}
app.kubernetes.io/name: gatehouse
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The labels of the pods and what selects them.
*/}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: gatehouse
app.kubernetes.io/component: webhook
{{- end }}

{{/*
The labels of the audit's pods and what selects them: never the webhooks'.
*/}}
{{- define "gatehouse.auditSelectorLabels" -}}
app.kubernetes.io/name: gatehouse
app.kubernetes.io/component: audit
{{- end }}

{{/*
The image reference: a digest pins it, else the tag (appVersion when empty).
*/}}
{{- define "gatehouse.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/*
"true" when the chart's own webhook configurations (deploy/webhooks') fit
the values: every webhook enabled and in Enforce. Warn, Audit and a
disabled webhook change the entries, which only the registry renders.
*/}}
{{- define "gatehouse.ownEntriesFit" -}}
{{- $fit := has (.Values.defaultMode | default "Enforce") (list "Enforce") -}}
{{- range $name, $w := .Values.webhooks -}}
{{- if and $w.mode (ne $w.mode "Enforce") }}{{ $fit = false }}{{ end -}}
{{- if and (hasKey $w "enabled") (not $w.enabled) }}{{ $fit = false }}{{ end -}}
{{- end -}}
{{- $fit -}}
{{- end }}

{{/*
The configuration keys that change the webhook configurations `gatehouse
manifests` renders (besides modes, webhooks switched off and exemptions):
for each, the value the chart's own (files/webhookconfigurations.yaml) were
rendered with, and the server's default when config leaves it out.
cmd/gatehouse/app TestChartChecksTheKeysThatShapeTheEntries keeps this list
equal to the keys that do.
*/}}
{{- define "gatehouse.entryKeys" -}}
harness.failClosedNamespaceLabel: {rendered: gatehouse.dev/harnessed, default: gatehouse.dev/harnessed}
harness.manageSelections: {rendered: true, default: false}
harness.scopedNamespaceLabel: {rendered: gatehouse.dev/scoped, default: gatehouse.dev/scoped}
overrides.configMapName: {rendered: unbounded-component-overrides, default: unbounded-component-overrides}
overrides.namespace: {rendered: unbounded-system, default: unbounded-system}
podSecurity.namespaceLabel: {rendered: gatehouse.dev/security-defaults=enabled, default: gatehouse.dev/security-defaults=enabled}
products.groupSuffixes: {rendered: [".kubedoop.dev"], default: [".kubedoop.dev"]}
{{- end }}

{{/*
Fails, naming the key, when config sets a key of gatehouse.entryKeys to
another value than the chart's own webhook configurations were rendered
with: they would select other namespaces, objects or members than the
server judges (with another harnessed-namespace label, no harnessed pod
would ever be sent to harness-proxy).
*/}}
{{- define "gatehouse.checkEntryKeys" -}}
{{- range $key, $want := fromYaml (include "gatehouse.entryKeys" .) }}
{{- $v := $.Values.config }}
{{- $found := true }}
{{- range $part := splitList "." $key }}
{{- if and $found (kindIs "map" $v) (hasKey $v $part) }}{{ $v = index $v $part }}{{ else }}{{ $found = false }}{{ end }}
{{- end }}
{{- if or (not $found) (kindIs "invalid" $v) }}{{ $v = $want.default }}{{ end }}
{{- if ne (toJson $v) (toJson $want.rendered) }}
{{- fail (printf "config.%s is %s, but the chart's own webhook configurations were rendered for %s: render them with `gatehouse manifests --config FILE` (FILE: the chart's config.yaml) and pass them as webhookConfigurations (--set-file webhookConfigurations=FILE)" $key (toJson $v) (toJson $want.rendered)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The server configuration: .Values.config with the modes and exemptions
added where they are set.
*/}}
{{- define "gatehouse.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "apiVersion" "gatehouse.dev/v1alpha1" -}}
{{- $_ := set $cfg "kind" "ServerConfig" -}}
{{- with .Values.defaultMode }}{{ $_ := set $cfg "defaultMode" . }}{{ end -}}
{{- with .Values.webhooks }}{{ $_ := set $cfg "webhooks" . }}{{ end -}}
{{- with .Values.exemptions }}{{ $_ := set $cfg "exemptions" . }}{{ end -}}
{{- toYaml $cfg -}}
{{- end }}

{{/*
Rewrites, in place, a namespaceSelector of the rendered webhook
configurations or admission policy bindings for the release: its
kubernetes.io/metadata.name NotIn list names the release's namespace and
exemptions.namespaces (when set; else the rendered list without
gatehouse-system), followed, for the chart's own configurations, by the
negated exempting labels (negated; none for a binding).
*/}}
{{- define "gatehouse.exemptNamespaces" -}}
{{- $exprs := list }}
{{- range $expr := .selector.matchExpressions }}
{{- if and (eq $expr.key "kubernetes.io/metadata.name") (eq $expr.operator "NotIn") }}
{{- $values := list $.ns }}
{{- if and $.own (hasKey $.exemptions "namespaces") }}
{{- range $v := $.exemptions.namespaces }}
{{- if not (has $v $values) }}{{ $values = append $values $v }}{{ end }}
{{- end }}
{{- else }}
{{- range $v := $expr.values }}
{{- if and (ne $v "gatehouse-system") (not (has $v $values)) }}{{ $values = append $values $v }}{{ end }}
{{- end }}
{{- end }}
{{- $_ := set $expr "values" $values }}
{{- $exprs = append $exprs $expr }}
{{- if $.own }}{{ $exprs = concat $exprs $.negated }}{{ end }}
{{- else }}
{{- $exprs = append $exprs $expr }}
{{- end }}
{{- end }}
{{- $_ := set .selector "matchExpressions" $exprs }}
{{- end }}
