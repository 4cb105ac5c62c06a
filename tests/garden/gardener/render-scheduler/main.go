// render-scheduler prints the objects gardener-operator deploys for gardener-scheduler, as
// Gardener's own component (pkg/component/gardener/scheduler, at the release pinned in go.mod)
// renders them, as one YAML stream:
//   - the runtime cluster's objects (Deployment, scheduler configuration ConfigMap, Service, ...),
//   - the virtual garden's RBAC (ClusterRole and ClusterRoleBinding),
//   - the Secrets the Deployment mounts (the access token Secret and the generic token kubeconfig).
//
// The component writes into a fake client here, and its secrets manager is Gardener's fake one,
// so the generic token kubeconfig Secret is an empty one that the caller fills in.
//
// Usage: render-scheduler -image IMAGE [-namespace garden] [-log-level info]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	operatorclient "github.com/gardener/gardener/pkg/operator/client"
	"github.com/gardener/gardener/pkg/component/gardener/scheduler"
	"github.com/gardener/gardener/pkg/utils/managedresources"
	fakesecretsmanager "github.com/gardener/gardener/pkg/utils/secrets/manager/fake"
)

func main() {
	image := flag.String("image", "", "the scheduler image")
	namespace := flag.String("namespace", "garden", "the runtime cluster's namespace of the virtual garden")
	logLevel := flag.String("log-level", "info", "the scheduler's log level")
	flag.Parse()
	if err := run(*image, *namespace, *logLevel); err != nil {
		fmt.Fprintln(os.Stderr, "render-scheduler:", err)
		os.Exit(1)
	}
}

func run(image, namespace, logLevel string) error {
	ctx := context.Background()
	c := fakeclient.NewClientBuilder().WithScheme(operatorclient.RuntimeScheme).Build()
	// gardener-operator's secrets manager generates this Secret; the fake one only finds it
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: v1beta1constants.SecretNameGenericTokenKubeconfig, Namespace: namespace}}); err != nil {
		return err
	}
	component := scheduler.New(c, namespace, fakesecretsmanager.New(c, namespace), scheduler.Values{
		Image:    image,
		LogLevel: logLevel,
	})
	if err := component.Deploy(ctx); err != nil {
		return fmt.Errorf("deploying: %w", err)
	}
	var objects []client.Object
	for _, name := range []string{scheduler.ManagedResourceNameRuntime, scheduler.ManagedResourceNameVirtual} {
		objs, err := managedresources.GetObjects(ctx, c, namespace, name)
		if err != nil {
			return fmt.Errorf("managed resource %s: %w", name, err)
		}
		objects = append(objects, objs...)
	}
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		// the managed resources' own Secrets carry the objects printed above
		if _, ok := s.Labels["resources.gardener.cloud/garbage-collectable-reference"]; ok {
			continue
		}
		objects = append(objects, s)
	}
	for _, obj := range objects {
		gvk, err := c.GroupVersionKindFor(obj)
		if err != nil {
			gvks, _, err2 := operatorclient.VirtualScheme.ObjectKinds(obj)
			if err2 != nil || len(gvks) == 0 {
				return fmt.Errorf("kind of %T: %w", obj, err)
			}
			gvk = gvks[0]
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		obj.SetResourceVersion("")
		out, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		fmt.Printf("---\n%s", out)
	}
	return nil
}
