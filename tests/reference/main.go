// Command reference decides landscapes with Gardener's own scheduler code, called unchanged: the
// objects are decoded with Gardener's scheme and defaults, served by controller-runtime's fake
// client, and every pending shoot is decided by the shoot reconciler's DetermineSeed.
//
// It reads one request a line on stdin and writes one answer a line on stdout (JSON):
//
//	request: {"strategy": "SameRegion", "objects": [...], "order": [{"shoot": "ns/name", "bind": "seed"}]}
//	answer:  {"pending": ["ns/name", ...], "decisions": [{"shoot": "ns/name", "seed": "s", "ties": ["s", "t"]}]}
//
// "order" lists the shoots to decide, in the order they are decided; after each decision the
// shoot is bound to its "bind" seed (when set), so that the next decision sees the same landscape
// as the other side's. "ties" is every seed upstream would pick equally (it picks the first of
// the seeds with the fewest shoots in list order; each is tried at the head of the list).
// "pending" lists the shoots upstream's controller would reconcile (its predicates). A decision
// that fails has "error" instead of "seed"; one that panics has "panic". An object that cannot
// be decoded makes the answer {"invalid": "..."}.
//
// A request with "time" is decided in timing mode instead (timing.go): served by an informer
// cache as upstream's scheduler reads in production, each decision timed.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	"github.com/gardener/gardener/pkg/api/indexer"
	"github.com/gardener/gardener/pkg/apis/config/scheduler/v1alpha1"
	"github.com/gardener/gardener/pkg/apis/core"
	gardencoreinstall "github.com/gardener/gardener/pkg/apis/core/install"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"github.com/gardener/gardener/pkg/scheduler/controller/shoot"
)

type request struct {
	Strategy string            `json:"strategy"`
	Objects  []json.RawMessage `json:"objects"`
	Order    []step            `json:"order"`
	// timing mode (timing.go): shoots decided but not served, and how long to time them
	Pending []json.RawMessage `json:"pending,omitempty"`
	Time    *timing           `json:"time,omitempty"`
}

type step struct {
	Shoot string `json:"shoot"`
	Bind  string `json:"bind,omitempty"`
}

type decision struct {
	Shoot string   `json:"shoot"`
	Seed  string   `json:"seed,omitempty"`
	Ties  []string `json:"ties,omitempty"`
	Error string   `json:"error,omitempty"`
	Panic string   `json:"panic,omitempty"`
}

type answer struct {
	Pending   []string   `json:"pending,omitempty"`
	Decisions []decision `json:"decisions,omitempty"`
	Invalid   string     `json:"invalid,omitempty"`
	Timing    *timed     `json:"timing,omitempty"`
}

var (
	scheme = runtime.NewScheme()
	codecs serializer.CodecFactory
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	gardencoreinstall.Install(scheme)
	codecs = serializer.NewCodecFactory(scheme)
}

// decode reads an object as gardener-apiserver stores it: decoded into the internal version
// with the v1beta1 defaults applied, then converted to v1beta1.
func decode(raw []byte) (client.Object, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	if meta.APIVersion == "v1" {
		obj, _, err := codecs.UniversalDecoder(corev1.SchemeGroupVersion).Decode(raw, nil, nil)
		if err != nil {
			return nil, err
		}
		return obj.(client.Object), nil
	}
	internal, _, err := codecs.UniversalDecoder(core.SchemeGroupVersion).Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	out, err := scheme.New(gardencorev1beta1.SchemeGroupVersion.WithKind(meta.Kind))
	if err != nil {
		return nil, err
	}
	if err := scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(gardencorev1beta1.SchemeGroupVersion.WithKind(meta.Kind))
	return out.(client.Object), nil
}

func key(obj client.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// pending says whether upstream's controller reconciles the shoot: its predicates, then the
// reconciler's own checks before DetermineSeed.
func pending(r *shoot.Reconciler, s *gardencorev1beta1.Shoot) bool {
	e := event.CreateEvent{Object: s}
	return r.ShootUnassignedPredicate().Create(e) && r.ShootIsNotSelfHosted().Create(e) &&
		!predicateutils.IsDeleting().Create(e) && s.Spec.SeedName == nil && s.DeletionTimestamp == nil
}

// decodeAll decodes every object of a request's list `field`, or says which one does not decode.
func decodeAll(field string, raws []json.RawMessage) ([]client.Object, string) {
	var objects []client.Object
	for i, raw := range raws {
		obj, err := decode(raw)
		if err != nil {
			return nil, fmt.Sprintf("%s[%d]: %v", field, i, err)
		}
		objects = append(objects, obj)
	}
	return objects, ""
}

func decide(ctx context.Context, req request) answer {
	objects, invalid := decodeAll("objects", req.Objects)
	if invalid != "" {
		return answer{Invalid: invalid}
	}
	// the seed listed first, to find every seed upstream would pick equally
	var front string
	c := fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objects...).
		WithIndex(&gardencorev1beta1.Project{}, core.ProjectNamespace, indexer.ProjectNamespaceIndexerFunc).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if seeds, ok := list.(*gardencorev1beta1.SeedList); ok && front != "" {
				i := slices.IndexFunc(seeds.Items, func(s gardencorev1beta1.Seed) bool { return s.Name == front })
				if i > 0 {
					s := seeds.Items[i]
					seeds.Items = slices.Insert(slices.Delete(seeds.Items, i, i+1), 0, s)
				}
			}
			return nil
		}}).
		Build()
	r := &shoot.Reconciler{
		Client:          c,
		Config:          &v1alpha1.ShootSchedulerConfiguration{Strategy: v1alpha1.CandidateDeterminationStrategy(req.Strategy)},
		GardenNamespace: "garden",
	}
	var out answer
	for _, obj := range objects {
		if s, ok := obj.(*gardencorev1beta1.Shoot); ok && pending(r, s) {
			out.Pending = append(out.Pending, key(s))
		}
	}
	sort.Strings(out.Pending)
	for _, st := range req.Order {
		out.Decisions = append(out.Decisions, decideOne(ctx, r, c, &front, st.Shoot))
		if st.Bind == "" {
			continue
		}
		s, err := getShoot(ctx, c, st.Shoot)
		if err != nil {
			return answer{Invalid: fmt.Sprintf("bind %s: %v", st.Shoot, err)}
		}
		s.Spec.SeedName = &st.Bind
		if err := c.Update(ctx, s); err != nil {
			return answer{Invalid: fmt.Sprintf("bind %s: %v", st.Shoot, err)}
		}
	}
	return out
}

func getShoot(ctx context.Context, c client.Client, k string) (*gardencorev1beta1.Shoot, error) {
	var ns, name string
	for i := range k {
		if k[i] == '/' {
			ns, name = k[:i], k[i+1:]
			break
		}
	}
	s := &gardencorev1beta1.Shoot{}
	return s, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
}

// determine calls DetermineSeed, turning a panic into an error of its own.
func determine(ctx context.Context, r *shoot.Reconciler, s *gardencorev1beta1.Shoot) (seed string, err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	got, err := r.DetermineSeed(ctx, logr.Discard(), s)
	if err != nil {
		return "", err, nil
	}
	return got.Name, nil, nil
}

func decideOne(ctx context.Context, r *shoot.Reconciler, c client.Client, front *string, k string) decision {
	d := decision{Shoot: k}
	s, err := getShoot(ctx, c, k)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	*front = ""
	seed, err, p := determine(ctx, r, s)
	if d = outcome(k, seed, err, p); d.Seed == "" {
		return d
	}
	// upstream picks the first seed with the fewest shoots: any other seed with as many
	// shoots that it picks when listed first is as good a pick
	seeds := &gardencorev1beta1.SeedList{}
	shoots := &gardencorev1beta1.ShootList{}
	if err := c.List(ctx, seeds); err != nil {
		d.Error = err.Error()
		return d
	}
	if err := c.List(ctx, shoots); err != nil {
		d.Error = err.Error()
		return d
	}
	usage := helper.CalculateSeedUsage(helper.ConvertShootList(shoots.Items))
	for _, other := range seeds.Items {
		if other.Name == seed || usage[other.Name] != usage[seed] {
			continue
		}
		*front = other.Name
		if got, err, p := determine(ctx, r, s); err == nil && p == nil && got == other.Name {
			d.Ties = append(d.Ties, got)
		}
	}
	*front = ""
	sort.Strings(d.Ties)
	return d
}

func main() {
	ctx := context.Background()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			var a answer
			if err := json.Unmarshal(line, &req); err != nil {
				a = answer{Invalid: "request: " + err.Error()}
			} else if req.Time != nil {
				a = timeDecisions(ctx, req)
			} else {
				a = decide(ctx, req)
			}
			if err := enc.Encode(a); err != nil {
				fmt.Fprintln(os.Stderr, "reference:", err)
				os.Exit(1)
			}
			if err := out.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, "reference:", err)
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}
